#include "core/run/HeadlessRun.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/io/Files.h"
#include "core/io/MetricsCsv.h"
#include "core/io/Safetensors.h"
#include "core/io/TraceJson.h"
#include "core/nn/ModelText.h"
#include "core/run/ModeChild.h"
#include "core/run/Options.h"
#include "core/run/RunSummary.h"
#include "core/train/ReductionPlan.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <thread>

namespace sgdscope {

namespace {
std::atomic<int> g_signal {0};
std::atomic<int> g_peerSignal {0}; // an MPI job's rank 0: the first signal another rank passed on
std::atomic<int> g_peerRank {-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onSignal(int sig)
{
    requestCancellation();
    const int earlier = g_signal.exchange(sig);
    if (earlier != 0 && sig != SIGUSR1) {
        // A second SIGINT or SIGTERM: the user insists. (A repeated SIGUSR1 is the same requested stop.)
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

/// Passes every event to the recorder and to the progress stream. An update the stream ran out of memory on, after
/// the recorder took it, comes again (Trainer::reportUntilFailure): the recorder does not take it twice.
class ProgressFanOut : public TrainingObserver
{
public:
    ProgressFanOut(HeadlessObserver& record, ProgressReporter& progress)
        : m_record(record)
        , m_progress(progress)
    {
    }
    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override
    {
        m_record.onWorkerTime(window, spans);
        m_progress.onWorkerTime(window, spans);
    }
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override
    {
        // The same update again after the progress stream threw (out of memory): it is recorded already.
        // (Unapplied pushes after a divergence share their index: the worker, version read and time tell them apart.)
        const bool again = m_recordedOnly && update.mode == m_recorded.mode && update.index == m_recorded.index
            && update.applied == m_recorded.applied && update.worker == m_recorded.worker
            && update.versionRead == m_recorded.versionRead && update.seconds == m_recorded.seconds;
        if (!again)
            m_record.onUpdate(update, figures);
        m_recorded = update;
        m_recordedOnly = true;
        m_progress.onUpdate(update, figures);
        m_recordedOnly = false;
    }
    void onEvaluation(const EvaluationRecord& e) override
    {
        m_record.onEvaluation(e);
        m_progress.onEvaluation(e);
    }
    bool stopRequested() override { return m_record.stopRequested(); }

private:
    HeadlessObserver& m_record;
    ProgressReporter& m_progress;
    bool m_recordedOnly = false; // the last update (m_recorded) reached the recorder, not the stream
    UpdateEvent m_recorded;
};

} // namespace

void installInterruptHandlers()
{
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::signal(SIGUSR1, onSignal); // what mpirun forwards to its processes at once (a clean stop)
    // A file beyond the process's size limit (ulimit -f) is a write error with its reason ("File too large"), said
    // with the file's name, not a process killed without a word.
    std::signal(SIGXFSZ, SIG_IGN);
}

int interruptSignal()
{
    const int own = g_signal.load();
    return own != 0 ? own : g_peerSignal.load();
}

void interruptForRank(int rank, int signal)
{
    int none = 0;
    if (signal == 0 || !g_peerSignal.compare_exchange_strong(none, signal))
        return;
    g_peerRank.store(rank);
    requestCancellation();
}

int interruptedRank()
{
    return g_signal.load() == 0 && g_peerSignal.load() != 0 ? g_peerRank.load() : -1;
}

int interruptedExitCode(int signal)
{
    return signal == SIGUSR1 ? 0 : 128 + signal;
}

std::vector<std::string> prepareOutputs(const RunConfig& config)
{
    const std::vector<std::string> created = ensureWritableDirectory(config.out, "--out");
    try {
        if (!config.saveParams.empty())
            checkWritableFilePath(config.saveParams, "--save-params");
        if (!config.trace.empty())
            checkWritableFilePath(config.trace, "--trace");
    } catch (const SgdError&) {
        removeFolders(created);
        throw;
    }
    return created;
}

void removeFolders(const std::vector<std::string>& folders)
{
    std::error_code ec;
    for (auto it = folders.rbegin(); it != folders.rend(); ++it)
        std::filesystem::remove(*it, ec); // (an empty folder only: one with files in it stays)
}

/// Workers beyond the chunks (sync) or the batch (async) have nothing to do: said once, it is not an error.
void noteBeforeTraining(const PreparedRun& run, const RunConfig& asGiven, int syncWorkers, int asyncWorkers)
{
    const RunConfig& config = run.config;
    const int chunk = chunkSizeFor(run.settings.chunk, run.settings.batch);
    const int chunks = ChunkLayout(run.settings.batch, chunk).chunkCount;
    if (config.runsSync() && syncWorkers > chunks)
        std::fprintf(stderr,
            "note: sync cuts each batch of %d into %d chunk%s of %d samples: workers %d to %d have nothing to compute "
            "and wait (--chunk sets the chunk size)\n",
            run.settings.batch, chunks, chunks == 1 ? "" : "s", chunk, chunks, syncWorkers - 1);
    if (config.slowFraction > 0 && std::lround(config.slowFraction * syncWorkers) == 0)
        std::fprintf(stderr,
            "note: --slow-fraction %g of %d workers rounds to no slow worker (the share is rounded to the nearest "
            "whole worker)\n",
            config.slowFraction, syncWorkers);
    if (config.runsAsync() && asyncWorkers > run.settings.batch)
        std::fprintf(stderr, "note: async gives each worker a slice of the batch of %d: workers %d to %d have none\n",
            run.settings.batch, run.settings.batch, asyncWorkers - 1);
    if (const LocalCalibration& c = run.engine.sim.calibration; c.busy())
        std::fprintf(stderr,
            "warning: the local cluster was measured on a busy machine (its threads waited for a core %.0f%% of the "
            "time they wanted one, its worker steps spread by %.0f%%): its speeds describe this load, not this "
            "machine\n",
            100.0 * std::max(0.0, c.waitedForACoreShare), 100.0 * c.spread);
    if (const MpiLinkCalibration& m = run.engine.sim.mpiLink; run.engine.sim.measuresMpi() && m.busy())
        std::fprintf(stderr,
            "warning: Open MPI's messages were measured on a busy machine (the probe's ranks waited for a core %.0f%% "
            "of the time they wanted one, its round trips of %llu bytes spread by %.0f%%): the local-mpi links "
            "describe this load, not this machine\n",
            100.0 * std::max(0.0, m.waitedForACoreShare), static_cast<unsigned long long>(m.messageBytes),
            100.0 * m.bandwidthSpread);
    if (!run.dataNote.empty())
        std::fprintf(stderr, "note: %s\n", run.dataNote.c_str());
    if (run.config.layers != asGiven.layers)
        std::fprintf(stderr, "note: the preset's model %s takes %s's widths: %s (choose with --layers)\n",
            widthsText(asGiven.layers).c_str(), toString(asGiven.dataset).c_str(),
            widthsText(run.config.layers).c_str());
    if (run.config.model != asGiven.model)
        std::fprintf(stderr, "note: the preset's model %s takes %s's outputs: %s (choose with --model)\n",
            modelText(asGiven.model).c_str(), toString(asGiven.dataset).c_str(), modelText(run.config.model).c_str());
}

std::vector<Mode> modesOf(const RunConfig& config)
{
    return config.modes;
}

namespace {

/// The line that says how a mode went, on stderr.
void sayModeDone(const ModeResult& m)
{
    const Mode mode = m.mode;
    char loss[64];
    std::snprintf(loss, sizeof loss, "%.6g", m.final.trainLoss);
    const std::string lossText = !m.finalIsLastEvaluation ? std::string("final loss ") + loss
        : m.final.index < 0                               ? std::string("no evaluation before it stopped")
                            : "loss at the last evaluation (update " + std::to_string(m.final.index) + ") " + loss;
    std::fprintf(stderr, "%-7s done: %lld updates, %lld samples in %.3f %ss (%.0f samples/s), %s%s%s%s\n",
        modeName(mode), static_cast<long long>(m.updates), static_cast<long long>(m.samples), m.seconds,
        m.engineChoice.kind == EngineKind::Sim ? "virtual " : "", m.samplesPerSecond(), lossText.c_str(),
        m.final.testAccuracy >= 0
            ? (", test accuracy " + formatNumber(std::round(m.final.testAccuracy * 1e4) / 1e4)).c_str()
            : "",
        m.diverged ? ", DIVERGED" : "",
        m.interrupted            ? ", interrupted"
            : !m.failure.empty() ? ", FAILED"
                                 : "");
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
            "%s diverged at update %lld: the loss became NaN or Inf, so this mode stopped there (try a smaller --lr); "
            "what it recorded so far is kept\n",
            modeName(mode), static_cast<long long>(m.divergedAt));
}

} // namespace

std::unique_ptr<HeadlessModeRun> trainMode(const PreparedRun& run, Mode mode, const ProgressFactory& progress)
{
    auto r = std::make_unique<HeadlessModeRun>();
    r->recorder = RunRecorder(1 << 17, run.config.trace.empty() ? 0 : 400000);
    HeadlessObserver observer(r->recorder, mode);
    std::unique_ptr<ProgressReporter> reporter = run.config.progress && progress ? progress(mode) : nullptr;
    // A simulated mode of a list gets a fresh simulation: a process of its own (run/ModeChild.h). Alone, this
    // process's simulation is fresh already.
    const bool ownProcess = run.engine.kind == EngineKind::Sim && run.config.modes.size() > 1;
    if (reporter) {
        ProgressFanOut both(observer, *reporter);
        r->result = ownProcess
            ? runModeInChild(run, mode, both, 0.05, [&](const ModeStanding& s) { reporter->afterSlice(s); })
            : runMode(
                run, mode, both, 0.05, [&](const Trainer& trainer) { reporter->afterSlice(standingOf(trainer)); });
    } else {
        r->result = ownProcess ? runModeInChild(run, mode, observer, 0.0, {}) : runMode(run, mode, observer);
    }
    try {
        sayModeDone(r->result);
    } catch (const std::bad_alloc&) {
        // The mode ran out of memory at its end, after runMode gave back what it held: its result is kept, and only
        // this line is left out (seen: the result lost with it, and the run's summary without the mode).
    }
    return r;
}

namespace {

/// Why the charts cannot be drawn, or nothing. Qt's raster painter (6.4) hands large fills to a thread pool and
/// waits for them; a thread that cannot start (the address space or the process limit exhausted) is waited for
/// forever. So after a run that ran out of memory, or when this process cannot start a thread, the charts are
/// left out (said on stderr and in summary.json) and the run ends with its other files. (Every out-of-memory
/// failure says "out of memory": run/Experiment, run/MpiJob, run/HeadlessStart.)
std::string whyChartsCannotBeDrawn(const std::string& failure)
{
    if (failure.find("out of memory") != std::string::npos)
        return "the run ran out of memory, and drawing them needs more (metrics.csv has every row)";
    try {
        std::thread probe([] {});
        probe.join();
    } catch (const std::system_error& e) {
        return std::string("this process cannot start a thread (") + e.what() + "), which drawing them needs";
    }
    return {};
}

} // namespace

int writeResults(const PreparedRun& run, const std::vector<std::unique_ptr<HeadlessModeRun>>& runs,
    const ChartWriter& charts, const Json& engineSummary, const std::string& failure,
    const std::function<void()>& afterSummary)
{
    const RunConfig& config = run.config;
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
    if (!engineSummary.is_null())
        summary[nameOf(engineNames, config.engine)] = engineSummary;
    Json modesJson = Json::array();
    bool diverged = false;
    std::string firstFailure = failure;
    for (const auto& r : runs) {
        modesJson.push_back(summaryJson(summaryRecord(r->result)));
        diverged = diverged || r->result.diverged;
        if (firstFailure.empty())
            firstFailure = r->result.failure;
    }
    summary["runs"] = modesJson;
    // A list of simulated modes trains each in a process of its own (run/ModeChild.h): its peak counts.
    const double peak = std::max(peakResidentBytes(), largestChildPeakBytes());
    summary["memory"] = Json {
        {"estimate_bytes",
            run.residentWhenPrepared >= 0 ? Json(run.residentWhenPrepared + run.modelMemoryBytes) : Json(nullptr)},
        {"resident_when_prepared_bytes",
            run.residentWhenPrepared >= 0 ? Json(run.residentWhenPrepared) : Json(nullptr)},
        {"training_estimate_bytes", run.modelMemoryBytes},
        {"peak_resident_bytes", peak >= 0 ? Json(peak) : Json(nullptr)},
        {"note",
            "estimate = this process's resident memory when the run was prepared (libraries, the data) + what "
            "training was estimated to need (parameters, momenta, reduction buffers, snapshots, workspaces, "
            "simulated workers); peak_resident_bytes: this process's peak (VmHWM) when the summary was written, or the "
            "largest "
            "peak of a simulated mode's own process if larger"}};
    const int signal = interruptSignal();
    summary["interrupted"] = signal != 0 && firstFailure.empty();
    if (signal != 0 && firstFailure.empty()) {
        summary["stopped_by"] = signal == SIGUSR1 ? "SIGUSR1 (a requested stop)"
            : signal == SIGINT                    ? "SIGINT"
            : signal == SIGTERM                   ? "SIGTERM"
                                                  : "signal " + std::to_string(signal);
        if (interruptedRank() >= 0)
            summary["stopped_by_rank"] = interruptedRank(); // an MPI job's: the rank that was signalled
    }
    summary["failed"] = !firstFailure.empty();
    if (!firstFailure.empty())
        summary["failure"] = firstFailure;

    std::vector<std::pair<Mode, const RunRecorder*>> recorded;
    std::vector<const HeadlessModeRun*> finished;
    for (const auto& r : runs) {
        recorded.emplace_back(r->result.mode, &r->recorder);
        finished.push_back(r.get());
    }
    std::vector<const RunMetrics*> workers;
    for (const auto& r : runs)
        workers.push_back(&r->result.metrics);
    // summary.json first, the most valuable file: it names the files still to come, so that whatever stops the
    // writing (mpirun's kill a second after it passes SIGTERM on, a dead rank, a full disk) leaves it saying what
    // may be missing; once every file is written it is written again without that list. (A failure to write a file
    // is thrown, naming it and its cause, once: the files after it would fail the same way on a full disk.)
    Json pending = Json::array();
    pending.push_back("metrics.csv");
    if (charts)
        for (const char* name : {"loss.png", "idle.png", "staleness.png", "comparison.png"})
            pending.push_back(name);
    if (!config.trace.empty())
        pending.push_back(config.trace);
    if (!config.saveParams.empty() && !runs.empty())
        pending.push_back(config.saveParams);
    summary["written_after_this_file"] = pending;
    const std::string summaryPath = joinPath(config.out, "summary.json");
    writeFileAtomically(summaryPath, dumpJson(summary, 2) + "\n");
    try {
        writeFileAtomically(
            joinPath(config.out, "metrics.csv"), metricsCsv(recorded, config.engine == EngineKind::Sim, workers));
        if (afterSummary)
            afterSummary();
        if (charts) {
            if (const std::string why = whyChartsCannotBeDrawn(firstFailure); why.empty()) {
                charts(config.out, finished);
            } else {
                std::cerr << "sgdscope: the charts are not drawn: " << why << '\n';
                summary["charts_not_drawn"] = why;
            }
        }
        if (!config.trace.empty())
            writeFileAtomically(config.trace,
                traceJson(recorded,
                    config.engine == EngineKind::Sim ? "virtual time, "
                            + (config.platform.empty() ? "cluster " + nameOf(clusterNames, config.cluster)
                                                       : "platform " + config.platform)
                                                     : std::string(),
                    config.engine == EngineKind::Mpi));
        if (!config.saveParams.empty() && !runs.empty()) {
            const ModeResult& first = runs.front()->result;
            if (first.parameters.size() != run.problem->layout.paddedSize()) {
                // A simulated mode whose process ended before its result: its parameters never came back.
                std::cerr << "sgdscope: --save-params: " << modeName(first.mode)
                          << "'s parameters never came back (its process ended before its result); '"
                          << config.saveParams << "' not written\n";
            } else {
                writeSafetensors(config.saveParams, run.problem->layout, first.parameters.data(),
                    {{"sgdscope_mode", modeName(first.mode)},
                        run.problem->spec.isMlp()
                            ? std::pair<const std::string, std::string> {"sgdscope_layers",
                                widthsText(run.problem->spec.widths())}
                            : std::pair<const std::string, std::string> {"sgdscope_model", run.problem->spec.text()}});
            }
        }
        summary.erase("written_after_this_file");
        writeFileAtomically(summaryPath, dumpJson(summary, 2) + "\n");
    } catch (const SgdError& e) {
        throw SgdError(
            std::string(e.what()) + "; " + summaryPath + ", written first, lists the files that may be missing");
    }
    if (!firstFailure.empty())
        return 1;
    if (signal != 0)
        return interruptedExitCode(signal);
    return diverged ? 3 : 0;
}

} // namespace sgdscope
