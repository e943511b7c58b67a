#include "core/run/LocalCalibration.h"

#include "core/engines/TrainerFactory.h"
#include "core/engines/sim/SimCost.h"
#include "core/metrics/TrainingObserver.h"

#include "core/train/ReductionPlan.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace sgdscope {

namespace {

/// Seconds per sample of every compute span.
class ComputeSpans : public TrainingObserver
{
public:
    void onWorkerTime(const WorkWindow&, std::span<const Span> spans) override
    {
        for (const Span& s : spans) {
            if (s.kind == SpanKind::Compute && s.samples > 0 && s.end > s.start)
                perSample.push_back(s.seconds() / s.samples);
        }
    }
    std::vector<double> perSample;
};

} // namespace

double measureLocalHostFlops(std::shared_ptr<const Problem> problem, const TrainerSettings& settings, Mode mode,
    double seconds, double warmUpSeconds)
{
    TrainerSettings s = settings;
    // As many workers as this machine has threads: more would share its cores, and measure that (a simulated
    // cluster of 1,024 workers models 1,024 hosts, each as fast as a worker here).
    s.workers = std::max(1, std::min(settings.workers, omp_get_max_threads()));
    s.accum
        = std::min(s.accum, std::max(1, ChunkLayout(s.batch, chunkSizeFor(s.chunk, s.batch)).chunkCount / s.workers));
    s.sampleBudget = std::numeric_limits<std::int64_t>::max();
    s.evalEverySamples = 0;
    // No straggler and no jitter: their sleeps leave cores idle, and a core that idles comes back to its working
    // speed only over seconds (measured here with a 4x straggler: a step of 3.0 ms in the first 0.3 s, 1.3 ms
    // after 2.4 s; without one it is steady at 1.2 ms after 0.6 s). The model applies them to this speed.
    s.stragglers.clear();
    s.slowFraction = 0.0;
    s.slowFractionFactor = 1.0;
    s.rotatingFactor = 1.0;
    s.heavyTail = 0.0;
    s.jitter = 0.0;
    s.targetAccuracy = -1.0;
    s.targetLoss = -1.0;
    const SimCost cost(problem->spec, problem->layout);
    auto trainer = makeTrainer(EngineKind::Threads, mode, problem, s);
    TrainingObserver quiet;
    // First touches of the buffers and the data, and the cores' climb to their working speed (measured here:
    // a 4x straggler's first 40 updates compute at 2.3 ms a step, the next 110 at 1.8): not measured.
    trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), warmUpSeconds}, quiet);
    ComputeSpans spans;
    trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), seconds}, spans);
    if (spans.perSample.empty())
        return 0.0;
    auto middle = spans.perSample.begin() + static_cast<std::ptrdiff_t>(spans.perSample.size() / 2);
    std::nth_element(spans.perSample.begin(), middle, spans.perSample.end());
    return cost.flopsPerSample / *middle;
}

} // namespace sgdscope
