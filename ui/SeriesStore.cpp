#include "ui/SeriesStore.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sgdscope::ui {

namespace {
constexpr double minLoss = 1e-12;

/// Losses are drawn on a log axis: an exact 0 becomes the axis floor (non-finite ones are never stored).
double clampLoss(double v)
{
    return std::max(v, minLoss);
}

/// Index range of points with x in [x0, x1] (points are in x order).
template<typename T>
std::pair<std::size_t, std::size_t> visible(const std::vector<T>& points, XAxisKind kind, double x0, double x1)
{
    const auto lo
        = std::lower_bound(points.begin(), points.end(), x0, [&](const T& p, double x) { return xOf(p, kind) < x; });
    const auto hi = std::upper_bound(lo, points.end(), x1, [&](double x, const T& p) { return x < xOf(p, kind); });
    return {static_cast<std::size_t>(lo - points.begin()), static_cast<std::size_t>(hi - points.begin())};
}
} // namespace

ModeSeries::ModeSeries(std::size_t capacity)
    : m_points(std::max<std::size_t>(capacity, 16))
    , m_evals(std::max<std::size_t>(capacity, 16))
{
}

void ModeSeries::clear()
{
    const double weight = m_smoothing;
    *this = ModeSeries(m_points.capacity());
    m_smoothing = weight;
}

void ModeSeries::setSmoothing(double weight)
{
    weight = std::clamp(weight, 0.0, 0.999);
    if (weight == m_smoothing)
        return;
    m_smoothing = weight;
    m_ema = m_debias = 0.0;
    auto& points = m_points.items();
    m_lastIndex = points.empty() ? -1 : points.front().index - 1;
    for (LossPoint& p : points) {
        const double w = std::pow(m_smoothing, static_cast<double>(std::max<std::int64_t>(1, p.index - m_lastIndex)));
        m_lastIndex = p.index;
        m_ema = w * m_ema + (1 - w) * std::log(clampLoss(p.loss));
        m_debias = w * m_debias + (1 - w);
        p.smoothedLog = static_cast<float>(m_ema / std::max(m_debias, 1e-300));
    }
}

void ModeSeries::add(const MetricsBatch& batch, int mode)
{
    const auto m = static_cast<std::size_t>(mode);
    const auto& points = batch.points[m];
    m_received += static_cast<std::int64_t>(points.size());
    for (LossPoint p : points) {
        if (!std::isfinite(p.loss))
            continue; // divergence: the curve ends at its last finite point (status().diverged says why)
        // Smoothing in log space (the charts' y axis is log), with the gap since the last point received.
        if (m_lastIndex < 0)
            m_lastIndex = p.index - 1;
        const std::int64_t gap = std::max<std::int64_t>(1, p.index - m_lastIndex);
        const double w = gap == 1 ? m_smoothing : std::pow(m_smoothing, static_cast<double>(gap));
        m_lastIndex = p.index;
        m_ema = w * m_ema + (1 - w) * std::log(clampLoss(p.loss));
        m_debias = w * m_debias + (1 - w);
        p.smoothedLog = static_cast<float>(m_ema / std::max(m_debias, 1e-300));
        m_points.push(p);
    }
    for (const EvalPoint& e : batch.evals[m]) {
        m_evals.push(e);
    }
    m_markers.insert(m_markers.end(), batch.markers[m].begin(), batch.markers[m].end());
    if (m_markers.size() > 64)
        m_markers.erase(m_markers.begin(), m_markers.end() - 64);
    m_timeline.insert(m_timeline.end(), batch.timeline[m].begin(), batch.timeline[m].end());
    if (!m_timeline.empty()) {
        const std::int64_t newest = m_timeline.back().bin;
        const auto keep = static_cast<std::int64_t>(timelineSeconds / TimeBin::width);
        const auto old = std::find_if(
            m_timeline.begin(), m_timeline.end(), [&](const TimeBin& b) { return b.bin >= newest - keep; });
        m_timeline.erase(m_timeline.begin(), old);
    }
    if (batch.status[m].valid)
        m_status = batch.status[m];
}

double xOf(const LossPoint& p, XAxisKind kind)
{
    switch (kind) {
    case XAxisKind::Updates:
        return static_cast<double>(p.index + 1);
    case XAxisKind::Samples:
        return static_cast<double>(p.samples);
    case XAxisKind::Seconds:
        return p.seconds;
    }
    return 0;
}

double xOf(const EvalPoint& p, XAxisKind kind)
{
    switch (kind) {
    case XAxisKind::Updates:
        return static_cast<double>(p.index);
    case XAxisKind::Samples:
        return static_cast<double>(p.samples);
    case XAxisKind::Seconds:
        return p.seconds;
    }
    return 0;
}

double xOf(const Marker& m, XAxisKind kind)
{
    switch (kind) {
    case XAxisKind::Updates:
        return static_cast<double>(m.index);
    case XAxisKind::Samples:
        return static_cast<double>(m.samples);
    case XAxisKind::Seconds:
        return m.seconds;
    }
    return 0;
}

QList<QPointF> decimateMinMax(const std::vector<LossPoint>& points, XAxisKind kind, double x0, double x1, int columns)
{
    QList<QPointF> out;
    const auto [first, last] = visible(points, kind, x0, x1);
    if (first >= last || columns < 1)
        return out;
    if (last - first <= static_cast<std::size_t>(2 * columns)) {
        out.reserve(static_cast<qsizetype>(last - first));
        for (std::size_t i = first; i < last; ++i)
            out.append(QPointF(xOf(points[i], kind), clampLoss(points[i].loss)));
        return out;
    }
    out.reserve(2 * columns);
    const double width = std::max(x1 - x0, 1e-300);
    std::size_t i = first;
    for (int c = 0; c < columns && i < last; ++c) {
        const double end = x0 + width * (c + 1) / columns;
        double lo = INFINITY, hi = -INFINITY, xlo = 0, xhi = 0;
        for (; i < last && (xOf(points[i], kind) <= end || c == columns - 1); ++i) {
            const double v = clampLoss(points[i].loss);
            const double x = xOf(points[i], kind);
            if (v < lo) {
                lo = v;
                xlo = x;
            }
            if (v > hi) {
                hi = v;
                xhi = x;
            }
        }
        if (lo > hi)
            continue;
        if (xlo <= xhi) {
            out.append(QPointF(xlo, lo));
            out.append(QPointF(xhi, hi));
        } else {
            out.append(QPointF(xhi, hi));
            out.append(QPointF(xlo, lo));
        }
    }
    return out;
}

QList<QPointF> smoothed(const std::vector<LossPoint>& points, XAxisKind kind, double x0, double x1, int columns)
{
    QList<QPointF> out;
    const auto [first, last] = visible(points, kind, x0, x1);
    if (first >= last || columns < 1)
        return out;
    out.reserve(columns + 1);
    const double width = std::max(x1 - x0, 1e-300);
    // The last point of each pixel column: one binary search per column.
    std::size_t i = first;
    for (int c = 0; c < columns && i < last; ++c) {
        const double end = x0 + width * (c + 1) / columns;
        const auto next = static_cast<std::size_t>(std::upper_bound(points.begin() + static_cast<std::ptrdiff_t>(i),
                                                       points.begin() + static_cast<std::ptrdiff_t>(last), end,
                                                       [&](double x, const LossPoint& p) { return x < xOf(p, kind); })
            - points.begin());
        const std::size_t at = (next > i ? next : i + 1) - 1;
        out.append(QPointF(xOf(points[at], kind), std::exp(static_cast<double>(points[at].smoothedLog))));
        i = std::max(next, i + 1);
    }
    return out;
}

QList<QPointF> meanTrend(const std::vector<LossPoint>& points, TrendValue value, double x0, double x1, int columns)
{
    QList<QPointF> out;
    const auto [first, last] = visible(points, XAxisKind::Seconds, x0, x1);
    if (first >= last || columns < 1)
        return out;
    const double width = std::max(x1 - x0, 1e-300);
    std::size_t i = first;
    for (int c = 0; c < columns && i < last; ++c) {
        const double end = x0 + width * (c + 1) / columns;
        double sum = 0;
        int n = 0;
        double x = 0;
        for (; i < last && (points[i].seconds <= end || c == columns - 1); ++i) {
            sum += value == TrendValue::Staleness ? static_cast<double>(points[i].staleness) : points[i].waitSeconds;
            x = points[i].seconds;
            ++n;
        }
        if (n > 0)
            out.append(QPointF(x, sum / n));
    }
    return out;
}

std::pair<QStringList, std::vector<std::int64_t>> stalenessBars(
    const std::vector<std::int64_t>& seen, bool tailFolded, int maxBars)
{
    // Past the 99.5th percentile, pushes are folded into one tail entry (at least four entries stay).
    const std::int64_t total = std::accumulate(seen.begin(), seen.end(), std::int64_t(0));
    std::size_t high = seen.size(); // the 99.5th percentile
    std::int64_t below = 0;
    for (std::size_t s = 0; s < seen.size() && total > 0; ++s) {
        below += seen[s];
        if (200 * below >= 199 * total) {
            high = s;
            break;
        }
    }
    high = std::max<std::size_t>(high, 2);
    std::vector<std::int64_t> counts = seen;
    if (high + 2 < seen.size()) {
        counts.resize(high + 2);
        counts.back()
            = std::accumulate(seen.begin() + static_cast<std::ptrdiff_t>(high + 1), seen.end(), std::int64_t(0));
        tailFolded = true;
    }
    const int size = static_cast<int>(counts.size());
    maxBars = std::max(4, maxBars);
    int first = -1;
    int last = -1;
    for (int s = 0; s < size; ++s) {
        if (counts[static_cast<std::size_t>(s)] > 0) {
            first = first < 0 ? s : first;
            last = s;
        }
    }
    if (last >= maxBars) {
        // More values than bars: bins of a round width over the range seen (1,024 workers have staleness near
        // 1,000; bins 0 to 15 would put every push in the last one).
        int width = 1;
        for (int scale = 1;; scale *= 10) {
            const int candidates[] = {scale, 2 * scale, 5 * scale};
            bool found = false;
            for (const int w : candidates) {
                if ((last / w) - (first / w) + 1 <= maxBars) {
                    width = w;
                    found = true;
                    break;
                }
            }
            if (found)
                break;
        }
        const int start = (first / width) * width;
        const int bars = last / width - first / width + 1;
        QStringList labels;
        std::vector<std::int64_t> heights(static_cast<std::size_t>(bars), 0);
        for (int s = first; s <= last; ++s)
            heights[static_cast<std::size_t>((s - start) / width)] += counts[static_cast<std::size_t>(s)];
        for (int b = 0; b < bars; ++b) {
            const int low = start + b * width;
            if (b == bars - 1 && tailFolded && last == size - 1)
                labels << QStringLiteral("%1+").arg(low);
            else
                labels << (width == 1 ? QString::number(low) : QStringLiteral("%1-%2").arg(low).arg(low + width - 1));
        }
        return {labels, heights};
    }
    const int bars = std::clamp(size, 4, std::max(4, maxBars));
    QStringList labels;
    std::vector<std::int64_t> heights(static_cast<std::size_t>(bars), 0);
    for (int b = 0; b < size; ++b)
        heights[static_cast<std::size_t>(std::min(b, bars - 1))] += counts[static_cast<std::size_t>(b)];
    const bool lastIsTail = size > bars || (tailFolded && size == bars);
    for (int b = 0; b < bars; ++b)
        labels << (b == bars - 1 && lastIsTail ? QStringLiteral("%1+").arg(b) : QString::number(b));
    return {labels, heights};
}

std::pair<QStringList, std::vector<std::int64_t>> waitBars(const std::vector<std::int64_t>& decades)
{
    // Short labels (a bar is narrow); the axis says "seconds".
    static const char* names[] = {"<1µ", "1µ", "10µ", "100µ", "1m", "10m", "100m", "1", "10", "100", "1000"};
    constexpr int nameCount = static_cast<int>(sizeof names / sizeof names[0]);
    const int size = std::min(static_cast<int>(decades.size()), nameCount);
    int first = size, last = -1;
    for (int d = 0; d < size; ++d) {
        if (decades[static_cast<std::size_t>(d)] > 0) {
            first = std::min(first, d);
            last = d;
        }
    }
    if (last < 0) {
        first = 3; // an empty chart shows 100 us to 100 ms
        last = 6;
    }
    while (last - first < 3) { // at least four bars, within the names (the decades may be fewer)
        if (last < nameCount - 1)
            ++last;
        else
            --first;
    }
    QStringList labels;
    std::vector<std::int64_t> heights;
    for (int d = first; d <= last; ++d) {
        labels << QString::fromUtf8(names[d]);
        heights.push_back(d < static_cast<int>(decades.size()) ? decades[static_cast<std::size_t>(d)] : 0);
    }
    return {labels, heights};
}

} // namespace sgdscope::ui
