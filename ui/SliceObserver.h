#pragma once

#include "ui/SessionData.h"

#include "core/metrics/TrainingObserver.h"
#include "core/run/Experiment.h"

#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <tuple>
#include <vector>

namespace sgdscope::ui {

/// Collects one mode's events during a time slice, on the training thread, and flushes them into the
/// window's staging buffer in one short lock per slice: loss points (evenly thinned if a slice has very
/// many), evaluations, the workers' time in millisecond bins for the timeline, and the mode's status.
class SliceObserver : public TrainingObserver
{
public:
    SliceObserver(int mode, std::mutex& stagingMutex, MetricsBatch& staging, const std::atomic<bool>& stop)
        : m_mode(mode)
        , m_mutex(stagingMutex)
        , m_staging(staging)
        , m_stop(stop)
    {
    }

    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override;
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override;
    void onEvaluation(const EvaluationRecord& evaluation) override;
    bool stopRequested() override { return m_stop.load(std::memory_order_relaxed); }

    /// The configuration changed at this point of the mode's clock: the status's worker figures start
    /// there.
    void setSegmentStart(double seconds) { m_segmentStart = seconds; }
    /// Moves what was collected, and the mode's status, into the staging buffer.
    void flush(const ModeStanding& standing);

private:
    void addTime(int worker, double start, double end, TimeBin::Kind kind);

    struct WorkerBins
    {
        std::int64_t first = 0;
        std::vector<std::array<float, TimeBin::KindCount>> bins;
    };

    int m_mode;
    std::mutex& m_mutex;
    MetricsBatch& m_staging;
    const std::atomic<bool>& m_stop;
    std::vector<LossPoint> m_points;
    std::vector<EvalPoint> m_evals;
    std::vector<WorkerBins> m_bins; // per worker, this slice's milliseconds
    std::deque<std::tuple<double, std::int64_t, std::int64_t>> m_history; // (seconds, updates, samples)
    double m_lastBatchLoss = 0.0;
    double m_lastEvalLoss = -1.0;
    double m_lastTestAccuracy = -1.0;
    double m_segmentStart = 0.0;
};

} // namespace sgdscope::ui
