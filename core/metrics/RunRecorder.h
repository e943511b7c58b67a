#pragma once

#include "core/metrics/EvenlyThinned.h"
#include "core/metrics/TrainingObserver.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

/// Keeps the points of a run for metrics.csv and the charts, in bounded memory: at most `capacity` update
/// points per mode. When full, every other point is dropped and from then on only every second update is
/// kept (then every fourth, ...), so a run of 10^7 updates keeps an evenly thinned curve of at most
/// `capacity` points while the run's own figures (RunMetrics: worker times, staleness, waits) stay exact.
/// Evaluations are kept the same way. Worker spans for the timeline are kept for the first `spanCapacity`
/// spans only.
class RunRecorder : public TrainingObserver
{
public:
    struct UpdatePoint
    {
        std::int64_t index;
        std::int64_t samples;
        double seconds;
        double batchLoss;
        std::int64_t staleness;
        double waitSeconds; // sync: the longest wait of a worker in this update
        int worker;
        double learningRate; // as applied (0: not reported)
    };

    static constexpr std::size_t defaultCapacity = 1 << 17;
    explicit RunRecorder(std::size_t capacity = defaultCapacity, std::size_t spanCapacity = 0);
    /// An update as a point: what the recorder keeps of it (and what the window plots).
    static UpdatePoint pointOf(const UpdateEvent& update, const UpdateFigures& figures);

    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override;
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override;
    void onEvaluation(const EvaluationRecord& evaluation) override;

    const std::vector<UpdatePoint>& updates() const { return m_updates.items(); }
    const std::vector<EvaluationRecord>& evaluations() const { return m_evaluations.items(); }
    const std::vector<Span>& spans() const { return m_spans; }
    bool spansTruncated() const { return m_spansTruncated; }
    std::int64_t stride() const { return m_updates.stride(); }

private:
    std::size_t m_spanCapacity;
    EvenlyThinned<UpdatePoint> m_updates;
    EvenlyThinned<EvaluationRecord> m_evaluations;
    std::vector<Span> m_spans;
    bool m_spansTruncated = false;
};

} // namespace sgdscope
