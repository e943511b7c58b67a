#include "core/run/LocalCalibration.h"

#include "core/common/ThreadCoreTime.h"
#include "core/engines/TrainerFactory.h"
#include "core/engines/sim/SimCost.h"
#include "core/metrics/TrainingObserver.h"

#include "core/train/ReductionPlan.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
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

/// Bytes read and written per second by copies of `floats` floats: each sample times enough copies in a row to
/// take at least 50 us (a small model's copy is shorter than the clock's resolution); the median of the samples.
double copyBandwidth(std::size_t floats)
{
    std::vector<float> a(floats, 1.0f);
    std::vector<float> b(floats, 0.0f);
    using Clock = std::chrono::steady_clock;
    const double bytes = 2.0 * static_cast<double>(floats * sizeof(float));
    int copies = 1;
    std::vector<double> rates;
    const auto until = Clock::now() + std::chrono::milliseconds(50);
    while (rates.size() < 9 || (Clock::now() < until && rates.size() < 1000)) {
        const auto start = Clock::now();
        for (int k = 0; k < copies; ++k) {
            std::memcpy(b.data(), a.data(), floats * sizeof(float));
            // The copies may not be left out, merged or moved out of the timed stretch.
            asm volatile("" : : "r"(b.data()), "r"(a.data()) : "memory");
        }
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        if (s < 50e-6 && copies < (1 << 24)) {
            copies *= 2;
            continue;
        }
        rates.push_back(bytes * copies / s);
    }
    auto middle = rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2);
    std::nth_element(rates.begin(), middle, rates.end());
    return *middle;
}

} // namespace

LocalCalibration calibrateLocalCluster(std::shared_ptr<const Problem> problem, const TrainerSettings& settings,
    Mode mode, double seconds, double warmUpSeconds)
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
    const auto [runBefore, waitBefore] = coreTimeOfThisProcess();
    trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), seconds}, spans);
    const auto [runAfter, waitAfter] = coreTimeOfThisProcess();
    LocalCalibration c;
    c.threads = s.workers;
    const double wanted = (runAfter - runBefore) + (waitAfter - waitBefore);
    c.waitedForACoreShare = runBefore >= 0 && runAfter >= 0 && wanted > 0
        ? std::clamp((waitAfter - waitBefore) / wanted, 0.0, 1.0)
        : -1.0;
    c.memoryBytesPerSecond = copyBandwidth(problem->layout.parameterCount());
    std::vector<double>& v = spans.perSample;
    c.spans = static_cast<int>(v.size());
    if (v.empty())
        return c;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    c.medianSecondsPerSample = at(0.5);
    c.spread = (at(0.75) - at(0.25)) / c.medianSecondsPerSample;
    c.hostFlops = cost.flopsPerSample / c.medianSecondsPerSample;
    return c;
}

} // namespace sgdscope
