// Throughput of the trainers, as JSON (one object): samples/s and time per update for the parabola preset
// (sync P = 1, 2), the fashion-mnist model (batch 256, sync P = 1, 2 x K = 1, 3, chunks of 8 (automatic)
// and of 64; async P = 2) and LeNet-5 (fashion-cnn: batch 256, sync P = 1, 2), on every kernel path this CPU has
// (--isa to pick one). Each figure: warm-up, then a window of about --seconds of wall time, median of --reps windows.
//   bench_trainer [--seconds S] [--reps N] [--only parabola|fashion|fashion-cnn] [--isa scalar|avx2|avx512]
#include "core/common/Json.h"
#include "core/engines/TrainerFactory.h"
#include "core/nn/kernels/Isa.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/Experiment.h"
#include "core/run/RunConfig.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace sgdscope;
using Clock = std::chrono::steady_clock;

namespace {

struct Measurement
{
    double samplesPerSecond = 0;
    double msPerUpdate = 0;
    double updatesPerSecond = 0;
};

PreparedRun prepare(const std::string& preset, const std::vector<std::pair<std::string, std::string>>& options)
{
    ConfigBuilder b;
    b.applyPreset(preset, "bench");
    for (const auto& [k, v] : options)
        b.applyOption(k, v);
    return prepareRun(b.resolve());
}

Measurement measure(const PreparedRun& run, Mode mode, double seconds, int warmupUpdates)
{
    TrainerSettings s = run.settings;
    s.sampleBudget = std::numeric_limits<std::int64_t>::max();
    s.evalEverySamples = 0;
    auto trainer = makeTrainer(EngineKind::Threads, mode, run.problem, s);
    TrainingObserver quiet;
    trainer->run(RunLimits {warmupUpdates, std::numeric_limits<double>::infinity()}, quiet);
    // Calibrate the number of updates to the window, then time them on the wall clock.
    const auto c0 = Clock::now();
    trainer->run(RunLimits {std::max(1, warmupUpdates), std::numeric_limits<double>::infinity()}, quiet);
    const double per = std::chrono::duration<double>(Clock::now() - c0).count() / std::max(1, warmupUpdates);
    const auto updates = static_cast<std::int64_t>(std::max(20.0, seconds / std::max(per, 1e-9)));
    const std::int64_t u0 = trainer->updates();
    const std::int64_t s0 = trainer->samples();
    const auto t0 = Clock::now();
    trainer->run(RunLimits {updates, std::numeric_limits<double>::infinity()}, quiet);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    Measurement m;
    m.samplesPerSecond = static_cast<double>(trainer->samples() - s0) / wall;
    m.updatesPerSecond = static_cast<double>(trainer->updates() - u0) / wall;
    m.msPerUpdate = 1000.0 / m.updatesPerSecond;
    return m;
}

Json record(const std::string& workload, Mode mode, const TrainerSettings& settings, const std::string& backend,
    std::vector<Measurement> reps)
{
    std::sort(reps.begin(), reps.end(),
        [](const Measurement& a, const Measurement& b) { return a.samplesPerSecond < b.samplesPerSecond; });
    const Measurement& median = reps[reps.size() / 2];
    Json j = Json::object();
    j["workload"] = workload;
    j["mode"] = modeName(mode);
    j["workers"] = settings.workers;
    j["accum"] = settings.accum;
    j["chunk"] = settings.chunk; // 0: automatic
    if (mode == Mode::Async)
        j["async_apply"] = nameOf(asyncApplyNames, settings.asyncApply);
    j["kernels"] = backend;
    j["samples_per_s"] = std::round(median.samplesPerSecond);
    j["samples_per_s_min"] = std::round(reps.front().samplesPerSecond);
    j["samples_per_s_max"] = std::round(reps.back().samplesPerSecond);
    j["updates_per_s"] = std::round(median.updatesPerSecond);
    j["ms_per_update"] = std::round(median.msPerUpdate * 1e4) / 1e4;
    return j;
}

} // namespace

int main(int argc, char** argv)
{
    double seconds = 3.0;
    int reps = 3;
    std::string only;
    std::string isaOnly;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--seconds"))
            seconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!std::strcmp(argv[i], "--isa"))
            isaOnly = argv[i + 1];
    }
    Json results = Json::array();
    struct Variant
    {
        int workers = 1;
        int accum = 1;
        int chunk = 0;
        AsyncApply apply = AsyncApply::Lock;
    };
    auto run = [&](const std::string& workload, const PreparedRun& prepared, Mode mode, Variant v, int warmup) {
        PreparedRun r = prepared;
        r.settings.workers = v.workers;
        r.settings.accum = v.accum;
        r.settings.chunk = v.chunk;
        r.settings.asyncApply = v.apply;
        std::vector<Measurement> ms;
        for (int i = 0; i < reps; ++i)
            ms.push_back(measure(r, mode, seconds, warmup));
        const Json rec = record(workload, mode, r.settings, isaName(activeIsa()), ms);
        std::fprintf(stderr, "%s\n", rec.dump(-1).c_str());
        results.push_back(rec);
    };
    for (const Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Scalar}) {
        if (!isaSupported(isa) || (!isaOnly.empty() && isaOnly != isaName(isa)))
            continue;
        if (isaOnly.empty() && isa == Isa::Scalar)
            continue; // the reference path is for exactness, not speed; --isa scalar measures it
        setActiveIsa(isa);
        if (only.empty() || only == "parabola") {
            const PreparedRun parabola = prepare("parabola", {{"mode", "sync"}});
            for (const int p : {1, 2})
                run("parabola", parabola, Mode::Sync, {p, 1, 0}, 2000); // 50 chunks of one sample
        }
        if ((only.empty() || only == "fashion")
            && std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
            const PreparedRun fashion = prepare("fashion-mnist", {{"mode", "sync"}});
            for (const int p : {1, 2}) {
                for (const int k : {1, 3})
                    run("fashion", fashion, Mode::Sync, {p, k, 0}, 30); // chunks of 8 (automatic)
                run("fashion", fashion, Mode::Sync, {p, 1, 64}, 30); // chunks of 64, for comparison
            }
            run("fashion", fashion, Mode::Async, {2, 1, 0, AsyncApply::Lock}, 30);
            run("fashion", fashion, Mode::Async, {2, 1, 0, AsyncApply::LockFree}, 30); // as PyTorch's Hogwild
        }
        if ((only.empty() || only == "fashion-cnn")
            && std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
            const PreparedRun cnn = prepare("fashion-cnn", {{"mode", "sync"}});
            for (const int p : {1, 2})
                run("fashion-cnn", cnn, Mode::Sync, {p, 1, 0}, 10); // chunks of 8 (automatic)
        }
    }
    Json out = Json::object();
    out["benchmark"] = "trainer throughput";
    out["window_seconds"] = seconds;
    out["reps"] = reps;
    out["results"] = results;
    std::printf("%s\n", dumpJson(out, 2).c_str());
    return 0;
}
