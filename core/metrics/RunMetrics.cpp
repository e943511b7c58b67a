#include "core/metrics/RunMetrics.h"

#include <algorithm>

namespace sgdscope {

double WorkerFigures::idle() const
{
    double sum = 0.0;
    for (int k = 0; k < spanKindCount; ++k) {
        if (isWait(static_cast<SpanKind>(k)))
            sum += seconds[static_cast<std::size_t>(k)];
    }
    return sum;
}

double WorkerFigures::unaccounted() const
{
    double spans = 0.0;
    for (const double s : seconds)
        spans += s;
    return wallSeconds - spans;
}

void WorkerFigures::add(const WorkerFigures& other)
{
    wallSeconds += other.wallSeconds;
    for (std::size_t k = 0; k < seconds.size(); ++k)
        seconds[k] += other.seconds[k];
    updates += other.updates;
    samples += other.samples;
    madeOthersWait += other.madeOthersWait;
}

void RunMetrics::addWorkerTime(const WorkWindow& window, std::span<const Span> spans)
{
    // What allocates comes first, so that running out of memory changes no figure.
    const auto team = static_cast<std::size_t>(std::max(0, window.workers));
    std::vector<WorkerFigures> here(team);
    if (m_workers.size() < team)
        m_workers.resize(team);
    if (m_segment.size() != team)
        m_segment.resize(team); // a worker that left drops out of the segment; one that joined starts at 0
    m_currentWorkers = window.workers;
    const double wall = window.end - window.start;
    m_wallSeconds += wall;

    for (auto& w : here)
        w.wallSeconds = wall;
    for (const Span& s : spans) {
        if (s.worker < 0 || static_cast<std::size_t>(s.worker) >= team || !(s.end > s.start))
            continue;
        WorkerFigures& w = here[static_cast<std::size_t>(s.worker)];
        w.seconds[static_cast<std::size_t>(s.kind)] += s.end - s.start;
        if (s.kind == SpanKind::Compute)
            w.samples += s.samples;
        if (isWait(s.kind) && s.culprit >= 0 && static_cast<std::size_t>(s.culprit) < team && s.culprit != s.worker)
            here[static_cast<std::size_t>(s.culprit)].madeOthersWait += s.end - s.start;
    }
    m_lastWindowWait = 0.0;
    for (std::size_t w = 0; w < team; ++w) {
        if (isSyncLike(m_mode)) {
            // A sync window is one update: a worker took part if it computed samples in it.
            here[w].updates = here[w].samples > 0 ? 1 : 0;
            m_lastWindowWait = std::max(m_lastWindowWait, here[w].idle());
        }
        m_workers[w].add(here[w]);
        m_segment[w].add(here[w]);
    }
}

UpdateFigures RunMetrics::addUpdate(const UpdateEvent& u)
{
    UpdateFigures f;
    f.staleness = u.versionApplied - u.versionRead;
    if (!u.applied)
        return f;
    // What allocates comes first (the staleness counters, the worker's row), so that running out of memory changes
    // no figure: Trainer::reportUpdate then counts the update once, later.
    const bool syncLike = isSyncLike(m_mode);
    if (!syncLike && u.worker >= 0 && m_workers.size() <= static_cast<std::size_t>(u.worker))
        m_workers.resize(static_cast<std::size_t>(u.worker) + 1);
    m_staleness.add(f.staleness, syncLike ? -1 : u.worker);
    m_costs.droppedGradients += u.droppedGradients;
    m_costs.droppedSamples += u.droppedSamples;
    if (u.compensation >= 0) {
        m_costs.compensationSum += u.compensation;
        m_costs.compensationMax = std::max(m_costs.compensationMax, u.compensation);
        ++m_costs.compensated;
    }
    if (u.modelSpread >= 0) {
        m_costs.modelSpreadSum += u.modelSpread;
        m_costs.modelSpreadMax = std::max(m_costs.modelSpreadMax, u.modelSpread);
        ++m_costs.averagings;
    }
    if (u.clockLead >= 0) {
        m_costs.largestClockLead = std::max(m_costs.largestClockLead, u.clockLead);
        m_costs.clockLeadSum += u.clockLead;
        ++m_costs.clockLeads;
    }
    if (u.learningRate > 0) {
        m_costs.learningRateMin
            = m_costs.learningRates == 0 ? u.learningRate : std::min(m_costs.learningRateMin, u.learningRate);
        m_costs.learningRateMax = std::max(m_costs.learningRateMax, u.learningRate);
        m_costs.learningRateSum += u.learningRate;
        ++m_costs.learningRates;
    }
    if (syncLike) {
        f.waitSeconds = m_lastWindowWait;
        m_waits.add(f.waitSeconds);
        return f;
    }
    if (u.boundWait >= 0) {
        f.waitSeconds = u.boundWait;
        m_waits.add(f.waitSeconds);
    }
    if (u.worker >= 0) {
        const auto w = static_cast<std::size_t>(u.worker);
        ++m_workers[w].updates;
        if (w < m_segment.size())
            ++m_segment[w].updates;
    }
    return f;
}

void RunMetrics::startSegment()
{
    m_segment.assign(m_segment.size(), WorkerFigures {});
}

double RunMetrics::fractionOf(const std::vector<WorkerFigures>& workers)
{
    double idle = 0.0;
    double wall = 0.0;
    for (const auto& w : workers) {
        idle += w.idle();
        wall += w.wallSeconds;
    }
    return wall > 0 ? idle / wall : 0.0;
}

} // namespace sgdscope
