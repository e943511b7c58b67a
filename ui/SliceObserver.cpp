#include "ui/SliceObserver.h"

#include "ui/PointConversion.h"

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

namespace {
constexpr std::size_t maxPointsPerFlush = 2048; // per mode and slice; the rest is thinned evenly
constexpr std::size_t maxBinsStaged = 64 * 3000; // three seconds of 64 workers, if the GUI does not drain

template<typename T>
void thinEvenly(std::vector<T>& items, std::size_t limit)
{
    if (items.size() <= limit)
        return;
    const std::size_t stride = (items.size() + limit - 1) / limit;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < items.size(); i += stride)
        items[kept++] = items[i];
    items.resize(kept);
}
} // namespace

void SliceObserver::onWorkerTime(const WorkWindow&, std::span<const Span> spans)
{
    for (const Span& s : spans)
        addTime(s.worker, s.start, s.end, timeBinKind(s.kind));
}

void SliceObserver::onUpdate(const UpdateEvent& u, const UpdateFigures& f)
{
    m_points.push_back(lossPoint(RunRecorder::pointOf(u, f)));
    m_lastBatchLoss = u.batchLoss;
}

void SliceObserver::onEvaluation(const EvaluationRecord& e)
{
    m_evals.push_back(evalPoint(e));
    m_lastEvalLoss = e.trainLoss;
    m_lastTestAccuracy = e.testAccuracy;
}

void SliceObserver::flush(const ModeStanding& standing)
{
    ModeStatus status = modeStatus(standing, m_segmentStart);

    // Rates over the last second of the mode's clock.
    m_history.emplace_back(standing.seconds, standing.updates, standing.samples);
    while (m_history.size() > 2 && standing.seconds - std::get<0>(m_history[1]) >= 1.0)
        m_history.pop_front();
    const auto& [s0, u0, n0] = m_history.front();
    const double dt = standing.seconds - s0;
    if (dt > 0) {
        status.updatesPerSecond = static_cast<double>(standing.updates - u0) / dt;
        status.samplesPerSecond = static_cast<double>(standing.samples - n0) / dt;
    }
    status.lastLoss = m_lastEvalLoss >= 0 ? m_lastEvalLoss : m_lastBatchLoss;
    status.lastTestAccuracy = m_lastTestAccuracy;

    // Thin this slice's points evenly if there are many (fast tiny models: ~20k per slice).
    thinEvenly(m_points, maxPointsPerFlush);
    std::vector<TimeBin> bins;
    for (std::size_t w = 0; w < m_bins.size(); ++w) {
        for (std::size_t i = 0; i < m_bins[w].bins.size(); ++i) {
            TimeBin b;
            b.worker = static_cast<int>(w);
            b.bin = m_bins[w].first + static_cast<std::int64_t>(i);
            b.seconds = m_bins[w].bins[i];
            bins.push_back(b);
        }
        m_bins[w].bins.clear();
    }
    std::sort(bins.begin(), bins.end(), [](const TimeBin& x, const TimeBin& y) { return x.bin < y.bin; });

    std::lock_guard lock(m_mutex);
    const auto m = static_cast<std::size_t>(m_mode);
    auto append = [](auto& to, auto& from) {
        to.insert(to.end(), from.begin(), from.end());
        from.clear();
    };
    append(m_staging.points[m], m_points);
    append(m_staging.evals[m], m_evals);
    append(m_staging.timeline[m], bins);
    // If the GUI does not drain (minimised window), keep the staging buffer bounded too.
    thinEvenly(m_staging.points[m], 64 * maxPointsPerFlush);
    auto& timeline = m_staging.timeline[m];
    if (timeline.size() > maxBinsStaged)
        timeline.erase(timeline.begin(), timeline.end() - static_cast<std::ptrdiff_t>(maxBinsStaged));
    m_staging.status[m] = std::move(status);
}

void SliceObserver::addTime(int worker, double a, double b, TimeBin::Kind kind)
{
    if (!(b > a) || worker < 0)
        return;
    if (static_cast<std::size_t>(worker) >= m_bins.size())
        m_bins.resize(static_cast<std::size_t>(worker) + 1);
    WorkerBins& wb = m_bins[static_cast<std::size_t>(worker)];
    // Step by bin index (not by the floating end of the previous piece, which can round back).
    const auto first = static_cast<std::int64_t>(std::floor(a / TimeBin::width));
    const auto last = static_cast<std::int64_t>(std::floor(b / TimeBin::width));
    if (wb.bins.empty())
        wb.first = first;
    if (first < wb.first) {
        wb.bins.insert(
            wb.bins.begin(), static_cast<std::size_t>(wb.first - first), std::array<float, TimeBin::KindCount> {});
        wb.first = first;
    }
    if (last - wb.first >= static_cast<std::int64_t>(wb.bins.size()))
        wb.bins.resize(static_cast<std::size_t>(last - wb.first + 1), std::array<float, TimeBin::KindCount> {});
    for (std::int64_t bin = first; bin <= last; ++bin) {
        const double lo = std::max(a, static_cast<double>(bin) * TimeBin::width);
        const double hi = std::min(b, static_cast<double>(bin + 1) * TimeBin::width);
        if (hi > lo)
            wb.bins[static_cast<std::size_t>(bin - wb.first)][kind] += static_cast<float>(hi - lo);
    }
}

} // namespace sgdscope::ui
