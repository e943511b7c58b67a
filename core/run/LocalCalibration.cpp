#include "core/run/LocalCalibration.h"

#include "core/engines/TrainerFactory.h"
#include "core/engines/sim/SimCost.h"
#include "core/metrics/TrainingObserver.h"

#include "core/train/ReductionPlan.h"

#include <omp.h>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

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

/// CPU time of the cores this process may use, in seconds: (all of it, the busy part), from /proc/stat.
std::pair<double, double> cpuTimeOfMyCores()
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (::sched_getaffinity(0, sizeof mine, &mine) != 0)
        return {0.0, 0.0};
    std::ifstream stat("/proc/stat");
    std::string line;
    double total = 0.0;
    double busy = 0.0;
    while (std::getline(stat, line)) {
        int cpu = -1;
        if (std::sscanf(line.c_str(), "cpu%d", &cpu) != 1 || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mine))
            continue;
        std::istringstream fields(line.substr(line.find(' ')));
        double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
        fields >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
        busy += user + nice + system + irq + softirq + steal;
        total += user + nice + system + idle + iowait + irq + softirq + steal;
    }
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    return {total / tick, busy / tick};
}

double myCpuSeconds()
{
    rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + 1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

/// Bytes read and written per second by a copy of `floats` floats: the median of repeated copies.
double copyBandwidth(std::size_t floats)
{
    std::vector<float> a(floats, 1.0f);
    std::vector<float> b(floats, 0.0f);
    using Clock = std::chrono::steady_clock;
    std::vector<double> rates;
    const auto until = Clock::now() + std::chrono::milliseconds(50);
    for (int i = 0; i < 1000 && (i < 9 || Clock::now() < until); ++i) {
        const auto start = Clock::now();
        std::memcpy(b.data(), a.data(), floats * sizeof(float));
        a[i % floats] = b[(i * 7) % floats]; // the copies cannot be left out
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        if (s > 0)
            rates.push_back(2.0 * static_cast<double>(floats * sizeof(float)) / s);
    }
    if (rates.empty())
        return 0.0;
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
    const auto [totalBefore, busyBefore] = cpuTimeOfMyCores();
    const double mineBefore = myCpuSeconds();
    trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), seconds}, spans);
    const auto [totalAfter, busyAfter] = cpuTimeOfMyCores();
    const double mine = myCpuSeconds() - mineBefore;
    LocalCalibration c;
    c.threads = s.workers;
    if (totalAfter > totalBefore)
        c.otherProcessesCpuShare = std::clamp((busyAfter - busyBefore - mine) / (totalAfter - totalBefore), 0.0, 1.0);
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
