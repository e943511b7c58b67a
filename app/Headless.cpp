#include "app/Headless.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/io/Files.h"
#include "core/io/MetricsCsv.h"
#include "core/io/Safetensors.h"
#include "core/io/SummaryJson.h"
#include "core/io/TraceJson.h"
#include "core/run/Options.h"
#include "core/train/ReductionPlan.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

namespace sgdscope {

namespace {

std::atomic<int> g_signal {0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onSignal(int sig)
{
    requestCancellation();
    if (g_signal.exchange(sig) != 0) {
        // Second signal: the user insists.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}

/// Records the run, prints progress now and then, and stops it on a signal.
class HeadlessObserver : public TrainingObserver
{
public:
    HeadlessObserver(RunRecorder& recorder, Mode mode)
        : m_recorder(recorder)
        , m_mode(mode)
    {
    }
    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override
    {
        m_recorder.onWorkerTime(window, spans);
    }
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override
    {
        m_recorder.onUpdate(update, figures);
    }
    void onEvaluation(const EvaluationRecord& e) override
    {
        m_recorder.onEvaluation(e);
        // Progress about once a second, whatever the evaluation rate.
        const auto now = std::chrono::steady_clock::now();
        if (now - m_lastPrint < std::chrono::seconds(1))
            return;
        m_lastPrint = now;
        std::fprintf(stderr, "%-5s %10lld samples  %7.2f s  training loss %.6g%s%s\n", modeName(m_mode),
            static_cast<long long>(e.samples), e.seconds, e.trainLoss,
            e.trainAccuracy >= 0 ? (", accuracy " + formatNumber(std::round(e.trainAccuracy * 1e4) / 1e4)).c_str() : "",
            e.testAccuracy >= 0 ? (", test accuracy " + formatNumber(std::round(e.testAccuracy * 1e4) / 1e4)).c_str()
                                : "");
    }
    bool stopRequested() override { return g_signal.load(std::memory_order_relaxed) != 0; }

private:
    RunRecorder& m_recorder;
    Mode m_mode;
    std::chrono::steady_clock::time_point m_lastPrint = std::chrono::steady_clock::now();
};

std::string joinPath(const std::string& dir, const std::string& name)
{
    return (std::filesystem::path(dir) / name).string();
}

} // namespace

void installInterruptHandlers()
{
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
}

int interruptSignal()
{
    return g_signal.load();
}

int runHeadless(const CommandLine& commandLine, const ChartWriter& charts)
{
    PreparedRun run;
    try {
        const RunConfig config = buildRunConfig(commandLine);
        if (config.out.empty())
            throw SgdError("--out: --headless needs an output folder, e.g. --out results");
        // Everything that can be wrong with the input is found before anything is written.
        run = prepareRun(config);
        // The output folder first (the other files may go into it), removed again if the rest is refused.
        const std::vector<std::string> created = ensureWritableDirectory(config.out, "--out");
        try {
            if (!config.saveParams.empty())
                checkWritableFilePath(config.saveParams, "--save-params");
            if (!config.trace.empty())
                checkWritableFilePath(config.trace, "--trace");
        } catch (const SgdError&) {
            std::error_code ec;
            for (auto it = created.rbegin(); it != created.rend(); ++it)
                std::filesystem::remove(*it, ec);
            throw;
        }
    } catch (const SgdError& e) {
        if (const int sig = interruptSignal()) {
            // Interrupted before training began: there is nothing to summarise.
            std::cerr << "sgdscope: interrupted before training began; nothing written\n";
            return 128 + sig;
        }
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 2;
    }
    const RunConfig& config = run.config;
    {
        // Workers beyond the chunks (sync) or the batch (async) have nothing to do: say so, it is not an error.
        const int chunk
            = run.settings.chunk > 0 ? run.settings.chunk : defaultChunkSize(run.settings.batch, run.problem->spec);
        const int chunks = ChunkLayout(run.settings.batch, chunk).chunkCount;
        if (config.runsSync() && config.workers > chunks)
            std::fprintf(stderr,
                "note: sync cuts each batch of %d into %d chunk%s of %d samples: workers %d to %d have nothing to "
                "compute "
                "and wait (--chunk sets the chunk size)\n",
                run.settings.batch, chunks, chunks == 1 ? "" : "s", chunk, chunks, config.workers - 1);
        if (config.runsAsync() && config.workers > run.settings.batch)
            std::fprintf(stderr,
                "note: async gives each worker a slice of the batch of %d: workers %d to %d have none\n",
                run.settings.batch, run.settings.batch, config.workers - 1);
    }
    std::vector<Mode> modes;
    if (config.mode != RunMode::Async)
        modes.push_back(Mode::Sync);
    if (config.mode != RunMode::Sync)
        modes.push_back(Mode::Async);

    std::vector<std::unique_ptr<HeadlessModeRun>> runs;
    try {
        for (const Mode mode : modes) {
            if (interruptSignal() != 0 && !runs.empty())
                break;
            auto r = std::make_unique<HeadlessModeRun>();
            r->recorder = RunRecorder(1 << 17, config.trace.empty() ? 0 : 400000);
            HeadlessObserver observer(r->recorder, mode);
            r->result = runMode(run, mode, observer);
            const ModeResult& m = r->result;
            std::fprintf(stderr,
                "%-5s done: %lld updates, %lld samples in %.3f s (%.0f samples/s), final loss %.6g%s%s%s\n",
                modeName(mode), static_cast<long long>(m.updates), static_cast<long long>(m.samples), m.seconds,
                m.samplesPerSecond(), m.final.trainLoss,
                m.final.testAccuracy >= 0
                    ? (", test accuracy " + formatNumber(std::round(m.final.testAccuracy * 1e4) / 1e4)).c_str()
                    : "",
                m.diverged ? ", DIVERGED" : "", m.interrupted ? ", interrupted" : "");
            if (m.settings.targetAccuracy >= 0 || m.settings.targetLoss >= 0) {
                if (m.target.reached)
                    std::fprintf(stderr, "%-5s reached the target after %.3f s and %lld samples (%lld updates)\n",
                        modeName(mode), m.target.seconds, static_cast<long long>(m.target.samples),
                        static_cast<long long>(m.target.updates));
                else
                    std::fprintf(stderr, "%-5s did not reach the target\n", modeName(mode));
            }
            if (m.diverged)
                std::fprintf(stderr,
                    "%s diverged at update %lld: the loss became NaN or Inf, so this mode stopped there (try a "
                    "smaller --lr); what it recorded so far is kept\n",
                    modeName(mode), static_cast<long long>(m.divergedAt));
            runs.push_back(std::move(r));
        }

        Json summary = Json::object();
        summary["version"] = "sgdscope 0.1";
        summary["config"] = configJson(config);
        Json data = Json::object();
        data["name"] = toString(config.dataset);
        data["train_samples"] = run.problem->train().size();
        if (run.problem->data->test)
            data["test_samples"] = run.problem->data->test->size();
        data["parameters"] = run.problem->layout.parameterCount();
        summary["dataset"] = data;
        Json modesJson = Json::array();
        bool diverged = false;
        for (const auto& r : runs) {
            modesJson.push_back(summaryJson(r->result));
            diverged = diverged || r->result.diverged;
        }
        summary["runs"] = modesJson;
        summary["interrupted"] = interruptSignal() != 0;

        std::vector<std::pair<Mode, const RunRecorder*>> recorded;
        std::vector<const HeadlessModeRun*> finished;
        for (const auto& r : runs) {
            recorded.emplace_back(r->result.mode, &r->recorder);
            finished.push_back(r.get());
        }
        writeFileAtomically(
            joinPath(config.out, "metrics.csv"), metricsCsv(recorded, config.engine == EngineKind::Sim));
        if (charts)
            charts(config.out, finished);
        if (!config.trace.empty())
            writeFileAtomically(config.trace, traceJson(recorded));
        if (!config.saveParams.empty() && !runs.empty()) {
            const ModeResult& first = runs.front()->result;
            writeSafetensors(config.saveParams, run.problem->layout, first.parameters.data(),
                {{"sgdscope_mode", modeName(first.mode)}, {"sgdscope_layers", run.problem->spec.layersText()}});
        }
        // summary.json last: its presence means the run's files are complete.
        writeFileAtomically(joinPath(config.out, "summary.json"), dumpJson(summary, 2) + "\n");
        if (const int sig = interruptSignal())
            return 128 + sig;
        return diverged ? 3 : 0;
    } catch (const SgdError& e) {
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 1;
    } catch (const std::bad_alloc&) {
        std::cerr << "sgdscope: out of memory during the run\n";
        return 1;
    }
}

} // namespace sgdscope
