// Time and samples each mode needs to reach a fixed training loss, with and without one 4x straggler, as
// JSON. Both modes run on the same data, seed and sample budget with P = 2 workers; the loss is measured on
// the whole training set every few updates (outside the modes' clocks).
//   bench_convergence [--only parabola|fashion]
#include "core/common/Json.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/Experiment.h"
#include "core/run/RunConfig.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace sgdscope;

namespace {

struct Reach : TrainingObserver
{
    double target = 0;
    std::int64_t samples = -1;
    double seconds = -1;
    std::int64_t updates = -1;
    double lastLoss = 0;
    void onEvaluation(const EvaluationRecord& e) override
    {
        lastLoss = e.trainLoss;
        if (samples < 0 && e.trainLoss <= target) {
            samples = e.samples;
            seconds = e.seconds;
            updates = e.index;
        }
    }
};

Json measure(const std::string& preset, const std::vector<std::pair<std::string, std::string>>& options, double target,
    std::int64_t evalEvery, const std::string& label)
{
    Json group = Json::object();
    group["workload"] = label;
    group["target_train_loss"] = target;
    Json runs = Json::array();
    for (const bool straggler : {false, true}) {
        for (const Mode mode : {Mode::Sync, Mode::Async}) {
            ConfigBuilder b;
            b.applyPreset(preset, "bench");
            for (const auto& [k, v] : options)
                b.applyOption(k, v);
            b.applyOption("workers", "2");
            b.applyOption("eval-every", std::to_string(evalEvery));
            if (straggler)
                b.applyOption("slow", "0:4");
            const PreparedRun run = prepareRun(b.resolve());
            Reach reach;
            reach.target = target;
            const ModeResult r = runMode(run, mode, reach);
            Json j = Json::object();
            j["mode"] = modeName(mode);
            j["straggler"] = straggler ? "worker 0 x4" : "none";
            j["reached"] = reach.samples >= 0;
            j["samples_to_target"] = reach.samples >= 0 ? Json(reach.samples) : Json(nullptr);
            j["seconds_to_target"] = reach.samples >= 0 ? Json(std::round(reach.seconds * 1e4) / 1e4) : Json(nullptr);
            j["updates_to_target"] = reach.samples >= 0 ? Json(reach.updates) : Json(nullptr);
            j["budget_samples"] = r.samples;
            j["budget_seconds"] = std::round(r.seconds * 1e4) / 1e4;
            j["final_train_loss"] = r.final.trainLoss;
            j["idle_fraction"] = std::round(r.metrics.idleFraction() * 1e4) / 1e4;
            j["mean_staleness"] = std::round(r.metrics.staleness().mean() * 1e3) / 1e3;
            if (r.final.testAccuracy >= 0)
                j["test_accuracy"] = r.final.testAccuracy;
            std::fprintf(stderr, "%s\n", j.dump(-1).c_str());
            runs.push_back(j);
        }
    }
    group["runs"] = runs;
    return group;
}

} // namespace

int main(int argc, char** argv)
{
    std::string only;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    Json results = Json::array();
    if (only.empty() || only == "parabola")
        // Two chunks of 25, so that both sync workers have a share (the default is one chunk for so small a model).
        results.push_back(measure("parabola", {{"chunk", "25"}}, 0.05, 10, "parabola (chunk 25)"));
    if ((only.empty() || only == "fashion")
        && std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
        results.push_back(measure("fashion-mnist", {{"epochs", "4"}}, 0.35, 39, "fashion-mnist (4 epochs)"));
    Json out = Json::object();
    out["benchmark"] = "time and samples to a fixed loss, P = 2";
    out["results"] = results;
    std::printf("%s\n", dumpJson(out, 2).c_str());
    return 0;
}
