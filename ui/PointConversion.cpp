#include "ui/PointConversion.h"

#include <algorithm>

namespace sgdscope::ui {

LossPoint lossPoint(const RunRecorder::UpdatePoint& p)
{
    LossPoint l;
    l.index = p.index;
    l.samples = p.samples;
    l.seconds = p.seconds;
    l.loss = p.batchLoss;
    l.staleness = p.staleness;
    l.waitSeconds = p.waitSeconds;
    return l;
}

EvalPoint evalPoint(const EvaluationRecord& e)
{
    EvalPoint p;
    p.index = e.index;
    p.samples = e.samples;
    p.seconds = e.seconds;
    p.loss = e.trainLoss;
    p.accuracy = e.trainAccuracy;
    p.hasTest = e.hasTest;
    p.testLoss = e.testLoss;
    p.testAccuracy = e.testAccuracy;
    return p;
}

ModeStatus modeStatus(const ModeStanding& progress, double segmentStart, std::size_t maxStalenessBins)
{
    static const RunMetrics none;
    const RunMetrics& metrics = progress.metrics ? *progress.metrics : none;
    ModeStatus s;
    s.valid = true;
    s.updates = progress.updates;
    s.samples = progress.samples;
    s.seconds = progress.seconds;
    s.diverged = progress.diverged;
    s.divergedAt = progress.divergedAt;
    s.finished = progress.finished;
    s.targetReached = progress.target.reached;
    s.targetSeconds = progress.target.seconds;
    s.targetSamples = progress.target.samples;
    s.targetAccuracy = progress.targetAccuracy;
    s.targetLoss = progress.targetLoss;
    s.segmentStart = segmentStart;
    s.virtualClock = progress.virtualClock;
    for (const WorkerFigures& w : metrics.segment()) {
        s.workers.push_back({w.wallSeconds, w.busy(), w.idle(), w.apply(), w.communication(), w.unaccounted(),
            w.updates, w.madeOthersWait});
    }
    s.idleFraction = metrics.segmentIdleFraction();
    s.meanStaleness = metrics.staleness().mean();
    s.maxStaleness = metrics.staleness().max();
    const auto& counts = metrics.staleness().counts();
    const std::size_t kept = std::min(counts.size(), std::max<std::size_t>(1, maxStalenessBins));
    s.stalenessCounts.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(kept));
    for (std::size_t i = kept; i < counts.size(); ++i)
        s.stalenessCounts.back() += counts[i]; // the tail is folded into the last entry, not dropped
    s.stalenessTailFolded = kept < counts.size();
    s.meanWait = metrics.updateWaits().mean();
    if (const auto& costs = metrics.costs(); costs.learningRates > 0)
        s.meanLearningRate = costs.learningRateSum / static_cast<double>(costs.learningRates);
    if (hasUpdateWaits(metrics.mode())) {
        // WaitStats counts ten bins per decade above 1 us: add them up per decade.
        const auto& bins = metrics.updateWaits().counts();
        s.waitDecades.assign(1 + (bins.size() - 2) / WaitStats::binsPerDecade + 1, 0);
        for (std::size_t b = 0; b < bins.size(); ++b) {
            const std::size_t decade = b == 0 ? 0 : 1 + (b - 1) / WaitStats::binsPerDecade;
            s.waitDecades[std::min(decade, s.waitDecades.size() - 1)] += bins[b];
        }
    }
    return s;
}

WaitReading waitReading(const ModeStatus& status)
{
    std::vector<WorkerBusy> workers;
    for (const WorkerTime& w : status.workers)
        workers.push_back({w.busy, w.updates});
    return readWaits(workers, status.meanWait);
}

TimeBin::Kind timeBinKind(SpanKind kind)
{
    switch (kind) {
    case SpanKind::Compute:
        return TimeBin::Compute;
    case SpanKind::Delay:
        return TimeBin::Delay;
    case SpanKind::Apply:
        return TimeBin::Apply;
    case SpanKind::Communicate:
        return TimeBin::Transfer;
    default:
        return TimeBin::Wait;
    }
}

} // namespace sgdscope::ui
