#pragma once

#include "core/metrics/Events.h"
#include "core/metrics/StalenessStats.h"
#include "core/metrics/WaitStats.h"

#include <array>
#include <span>
#include <vector>

namespace sgdscope {

/// One worker's time and work, summed from its spans.
struct WorkerFigures
{
    double wallSeconds = 0.0; // the mode's clock while the worker was a member of the team
    std::array<double, spanKindCount> seconds {}; // by SpanKind
    std::int64_t updates = 0; // sync: updates it computed a part of; async: its pushes applied
    std::int64_t samples = 0; // samples it computed
    /// Others' waits attributed to this worker (Span::culprit): how long it made the others wait, summed over them.
    double madeOthersWait = 0.0;

    double of(SpanKind k) const { return seconds[static_cast<std::size_t>(k)]; }
    double busy() const { return of(SpanKind::Compute) + of(SpanKind::Delay); }
    double idle() const;
    double apply() const { return of(SpanKind::Apply); }
    double communication() const { return of(SpanKind::Communicate); }
    /// Wall time no span accounts for (measured both ways: the wall from the windows, the spans from the
    /// workers' own clock readings), so a gap in the accounting shows here instead of being hidden.
    double unaccounted() const;
    double idleFraction() const { return wallSeconds > 0 ? idle() / wallSeconds : 0.0; }
    void add(const WorkerFigures& other);
};

/// Every figure of a mode's run, derived from its event stream and nothing else: per worker wall, busy,
/// idle by kind of wait, apply and communication time and the unaccounted rest; staleness (from the
/// versions read and applied); sync's wait per update (the longest wait of any worker in it).
///
/// Besides the run's totals it keeps a segment: the totals since the last configuration change
/// (startSegment()), for the workers that exist now, which is what the window shows after the worker count
/// changed.
class RunMetrics
{
public:
    explicit RunMetrics(Mode mode = Mode::Sync)
        : m_mode(mode)
    {
    }

    void addWorkerTime(const WorkWindow& window, std::span<const Span> spans);
    UpdateFigures addUpdate(const UpdateEvent& update);
    /// The configuration changed: segment totals start again (run totals go on).
    void startSegment();

    Mode mode() const { return m_mode; }
    /// Run totals, one per worker that was ever a member.
    const std::vector<WorkerFigures>& workers() const { return m_workers; }
    /// Totals since the last startSegment(), for the current team only.
    const std::vector<WorkerFigures>& segment() const { return m_segment; }
    /// Team size of the latest window.
    int currentWorkers() const { return m_currentWorkers; }
    /// Idle time over wall time, all workers together (run totals / segment).
    double idleFraction() const { return fractionOf(m_workers); }
    double segmentIdleFraction() const { return fractionOf(m_segment); }
    /// The mode's wall time (the sum of its windows).
    double wallSeconds() const { return m_wallSeconds; }
    const StalenessStats& staleness() const { return m_staleness; }
    const WaitStats& updateWaits() const { return m_waits; }
    /// What the modes between sync and async pay, summed over the updates applied: gradients and samples dropped
    /// (backup), the compensation's size against the gradient (dc-asgd: sum and count of pushes, and the largest),
    /// and the learning rate applied (sum over the updates that reported one).
    struct ModeCosts
    {
        std::int64_t droppedGradients = 0;
        std::int64_t droppedSamples = 0;
        double compensationSum = 0.0;
        double compensationMax = 0.0;
        std::int64_t compensated = 0;
        double learningRateSum = 0.0;
        std::int64_t learningRates = 0;
        double learningRateMin = 0.0; // of the updates that reported one (0 if none did)
        double learningRateMax = 0.0;
        double modelSpreadSum = 0.0; // local-sgd
        double modelSpreadMax = 0.0;
        std::int64_t averagings = 0;
        std::int64_t largestClockLead = -1; // ssp
        std::int64_t clockLeadSum = 0;
        std::int64_t clockLeads = 0;
    };
    const ModeCosts& costs() const { return m_costs; }

private:
    static double fractionOf(const std::vector<WorkerFigures>& workers);

    Mode m_mode;
    std::vector<WorkerFigures> m_workers;
    std::vector<WorkerFigures> m_segment;
    int m_currentWorkers = 0;
    double m_wallSeconds = 0.0;
    double m_lastWindowWait = 0.0; // sync: longest idle of any worker in the latest window
    StalenessStats m_staleness;
    WaitStats m_waits;
    ModeCosts m_costs;
};

} // namespace sgdscope
