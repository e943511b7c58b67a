#include "app/Headless.h"

#include "core/common/Cancellation.h"
#include "core/common/Error.h"
#include "core/engines/mpi/MpiAsyncTrainer.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiSyncTrainer.h"
#include "core/io/Files.h"
#include "core/io/MetricsCsv.h"
#include "core/io/Safetensors.h"
#include "core/io/Sha256.h"
#include "core/io/SummaryJson.h"
#include "core/io/TraceJson.h"
#include "core/nn/MlpSpec.h"
#include "core/nn/kernels/Isa.h"
#include "core/run/Options.h"
#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

namespace sgdscope {

namespace {
std::string layersText(const std::vector<int>& layers)
{
    MlpSpec spec;
    spec.layers = layers;
    return spec.layersText();
}

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

/// The output folder (created) and the other output paths (checked), before any training; the folders it
/// made are removed again if something is refused.
void prepareOutputs(const RunConfig& config)
{
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
}

/// Workers beyond the chunks (sync) or the batch (async) have nothing to do: said once, it is not an error.
void noteIdleWorkers(const PreparedRun& run, int syncWorkers, int asyncWorkers)
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
}

std::vector<Mode> modesOf(const RunConfig& config)
{
    std::vector<Mode> modes;
    if (config.runsSync())
        modes.push_back(Mode::Sync);
    if (config.runsAsync())
        modes.push_back(Mode::Async);
    return modes;
}

/// Passes every event to the recorder and to the progress stream.
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
        m_record.onUpdate(update, figures);
        m_progress.onUpdate(update, figures);
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
};

/// Trains one mode, recording it (and streaming it with --progress), and says how it went.
std::unique_ptr<HeadlessModeRun> trainMode(const PreparedRun& run, Mode mode, const ProgressFactory& progress)
{
    auto r = std::make_unique<HeadlessModeRun>();
    r->recorder = RunRecorder(1 << 17, run.config.trace.empty() ? 0 : 400000);
    HeadlessObserver observer(r->recorder, mode);
    std::unique_ptr<ProgressReporter> reporter = run.config.progress && progress ? progress(mode) : nullptr;
    if (reporter) {
        ProgressFanOut both(observer, *reporter);
        r->result = runMode(run, mode, both, 0.05, [&](const Trainer& trainer) { reporter->afterSlice(trainer); });
    } else {
        r->result = runMode(run, mode, observer);
    }
    const ModeResult& m = r->result;
    std::fprintf(stderr, "%-5s done: %lld updates, %lld samples in %.3f %ss (%.0f samples/s), final loss %.6g%s%s%s\n",
        modeName(mode), static_cast<long long>(m.updates), static_cast<long long>(m.samples), m.seconds,
        m.engineChoice.kind == EngineKind::Sim ? "virtual " : "", m.samplesPerSecond(), m.final.trainLoss,
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
            "%s diverged at update %lld: the loss became NaN or Inf, so this mode stopped there (try a smaller --lr); "
            "what it recorded so far is kept\n",
            modeName(mode), static_cast<long long>(m.divergedAt));
    return r;
}

/// Writes every output file, summary.json last (its presence means the run's files are complete); returns
/// the exit code.
int writeResults(const PreparedRun& run, const std::vector<std::unique_ptr<HeadlessModeRun>>& runs,
    const ChartWriter& charts, const Json& engineSummary)
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
    writeFileAtomically(joinPath(config.out, "metrics.csv"), metricsCsv(recorded, config.engine == EngineKind::Sim));
    // An interrupted run may have little time left (mpirun kills a second after it passes SIGTERM on): its
    // summary goes first, saying which files are still to come; a finished run's summary goes last, so that
    // its presence means every file is there.
    const bool interrupted = interruptSignal() != 0;
    if (interrupted) {
        Json pending = Json::array();
        if (charts)
            for (const char* name : {"loss.png", "idle.png", "staleness.png", "comparison.png"})
                pending.push_back(name);
        if (!config.trace.empty())
            pending.push_back(config.trace);
        if (!config.saveParams.empty())
            pending.push_back(config.saveParams);
        summary["written_after_this_file"] = pending;
        writeFileAtomically(joinPath(config.out, "summary.json"), dumpJson(summary, 2) + "\n");
    }
    if (charts)
        charts(config.out, finished);
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
        writeSafetensors(config.saveParams, run.problem->layout, first.parameters.data(),
            {{"sgdscope_mode", modeName(first.mode)}, {"sgdscope_layers", run.problem->spec.layersText()}});
    }
    if (!interrupted)
        writeFileAtomically(joinPath(config.out, "summary.json"), dumpJson(summary, 2) + "\n");
    if (const int sig = interruptSignal())
        return 128 + sig;
    return diverged ? 3 : 0;
}

int runHeadlessMpi(const RunConfig& config, const ChartWriter& charts, const ProgressFactory& progress);

} // namespace

void installInterruptHandlers()
{
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::signal(SIGUSR1, onSignal); // what mpirun forwards to its processes at once (a clean stop)
}

int interruptSignal()
{
    return g_signal.load();
}

int refuseCommandLine(const std::string& problem, bool sameOnEveryRank)
{
    const int rank = MpiContext::environmentRank();
    if (!sameOnEveryRank && MpiContext::launchedByMpirun())
        std::cerr << "sgdscope: rank " << rank << ": " << problem << '\n';
    else if (rank <= 0)
        std::cerr << "sgdscope: " << problem << '\n';
    if (rank > 0)
        std::this_thread::sleep_for(std::chrono::seconds(1));
    return 2;
}

int runHeadless(const CommandLine& commandLine, const ChartWriter& charts, const ProgressFactory& progress)
{
    RunConfig config;
    PreparedRun run;
    try {
        config = buildRunConfig(commandLine);
        if (config.out.empty())
            throw SgdError("--out: --headless needs an output folder, e.g. --out results");
    } catch (const SgdError& e) {
        return refuseCommandLine(e.what());
    }
    if (config.engine == EngineKind::Mpi)
        return runHeadlessMpi(config, charts, progress);
    try {
        // Everything that can be wrong with the input is found before anything is written.
        run = prepareRun(config);
        prepareOutputs(config);
    } catch (const SgdError& e) {
        if (const int sig = interruptSignal()) {
            // Interrupted before training began: there is nothing to summarise.
            std::cerr << "sgdscope: interrupted before training began; nothing written\n";
            return 128 + sig;
        }
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 2;
    }
    noteIdleWorkers(run, config.workers, config.workers);
    if (run.config.layers != config.layers)
        std::fprintf(stderr, "note: the preset's model %s takes %s's widths: %s (choose with --layers)\n",
            layersText(config.layers).c_str(), toString(config.dataset).c_str(), layersText(run.config.layers).c_str());
    std::vector<std::unique_ptr<HeadlessModeRun>> runs;
    try {
        for (const Mode mode : modesOf(config)) {
            if (interruptSignal() != 0 && !runs.empty())
                break;
            runs.push_back(trainMode(run, mode, progress));
        }
        return writeResults(run, runs, charts, Json());
    } catch (const SgdError& e) {
        std::cerr << "sgdscope: " << e.what() << '\n';
        return 1;
    } catch (const std::bad_alloc&) {
        std::cerr << "sgdscope: out of memory during the run\n";
        return 1;
    }
}

namespace {

/// --engine mpi: every process of the job runs this. Rank 0 trains (it is worker 0 in sync, the parameter
/// server in async) and writes every file; the others serve it and write nothing. Problems found before
/// training end every process with exit 2 and one message.
int runHeadlessMpi(const RunConfig& original, const ChartWriter& charts, const ProgressFactory& progress)
{
    MpiContext& mpi = MpiContext::init();
    // Rank 0 talks to every process, so it is the one to notice a silent process and end the job; the others
    // wait a little longer, one after the other, so that one message names the silent process (rank 0 when it
    // is the one).
    mpi.setTimeout(original.peerTimeout + (mpi.rank() == 0 ? 0.0 : 2.0 + 0.2 * std::min(mpi.rank() - 1, 10)));
    const int rank = mpi.rank();
    const int size = mpi.size();
    auto refuse = [&](int who, const std::string& message) {
        if (rank == who)
            std::cerr << "sgdscope: " << message << '\n';
        mpi.finalize();
        // mpirun ends the job at the first process that exits non-zero and may drop what the others still had
        // in their pipes: the one that said why leaves first.
        if (rank != who)
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return 2;
    };
    // 1. The worker count follows from the processes: sync N workers, async a server and N - 1.
    RunConfig config = original;
    const bool workersGiven
        = config.origins.count("workers") && config.origins.at("workers").rfind("--workers (from", 0) != 0;
    if (config.runsAsync() && size < 2)
        return refuse(0,
            "--engine mpi: async needs at least 2 processes (a parameter server and a worker); start "
            "mpirun -np 2 or more, or use --mode sync");
    if (workersGiven) {
        const std::string origin = config.originOf("workers");
        if (config.mode == RunMode::Both)
            return refuse(0,
                origin + ": with --engine mpi and --mode both the worker count follows from the " + std::to_string(size)
                    + " processes (sync " + std::to_string(size) + ", async " + std::to_string(size - 1)
                    + "); leave it out");
        const int expected = config.runsSync() ? size : size - 1;
        if (config.workers != expected)
            return refuse(0,
                origin + ": " + std::to_string(config.workers) + " does not match this MPI job of "
                    + std::to_string(size) + " processes ("
                    + (config.runsSync() ? "sync: one worker each"
                                         : "async: a parameter server and " + std::to_string(size - 1) + " workers")
                    + "); leave it out or start mpirun -np "
                    + std::to_string(config.runsSync() ? config.workers : config.workers + 1));
    }
    config.workers = config.runsSync() ? size : size - 1;
    for (const Straggler& slow : config.slow) {
        const int fewest = config.runsAsync() ? size - 1 : size;
        if (slow.worker >= fewest)
            return refuse(0,
                config.originOf("slow") + ": worker " + std::to_string(slow.worker)
                    + " does not exist in this MPI job of " + std::to_string(size) + " processes ("
                    + (config.runsSync() ? "sync: workers 0 to " + std::to_string(size - 1) : std::string())
                    + (config.mode == RunMode::Both ? ", " : "")
                    + (config.runsAsync() ? "async: workers 0 to " + std::to_string(size - 2) : std::string()) + ")");
    }

    // 2. Every process must run the same configuration, with the same build (the ranks exchange raw values).
    Sha256 sha;
    // The kernels' order of operations decides the bits; their instruction set does not (a rank may run on
    // another CPU and take another path).
    const std::string text = dumpJson(configJson(config), -1) + " sgdscope 0.1 kernel order "
        + std::to_string(kernelOrderVersion) + " span " + std::to_string(sizeof(Span)) + " float "
        + std::to_string(sizeof(float)) + " little-endian "
        + std::to_string(static_cast<int>(std::endian::native == std::endian::little));
    sha.update(text.data(), text.size());
    const auto digest = sha.finish();
    std::uint64_t hash = 0;
    std::memcpy(&hash, digest.data(), sizeof hash);
    std::int64_t differs = -1;
    const std::vector<std::uint64_t> hashes = mpi.gather(hash);
    for (std::size_t r = 1; r < hashes.size() && differs < 0; ++r) {
        if (hashes[r] != hashes[0])
            differs = static_cast<std::int64_t>(r);
    }
    differs = mpi.broadcast(differs);
    if (differs >= 0)
        return refuse(0,
            "--engine mpi: rank " + std::to_string(differs)
                + " was given other options than rank 0 (its configuration differs); give every process the same "
                  "command line");

    // 3. Each process loads its own copy of the data and checks everything; the first that fails says why.
    PreparedRun run;
    std::string problem;
    try {
        run = prepareRun(config);
        if (rank == 0)
            prepareOutputs(config);
    } catch (const SgdError& e) {
        problem = e.what();
    }
    std::int64_t failed = -1;
    const std::vector<std::uint64_t> failures = mpi.gather(problem.empty() ? 0 : 1);
    for (std::size_t r = 0; r < failures.size() && failed < 0; ++r) {
        if (failures[r])
            failed = static_cast<std::int64_t>(r);
    }
    failed = mpi.broadcast(failed);
    if (failed >= 0)
        return refuse(
            static_cast<int>(failed), (size > 1 ? "rank " + std::to_string(rank) + ": " : std::string()) + problem);

    // 4. Every process loaded the same data (a different file at the same path on another machine would
    //    train other batches without a word): a digest of its size and of every 64th sample.
    {
        const Dataset& train = run.problem->train();
        Sha256 data;
        const std::int64_t n = train.size();
        const int features = train.features();
        data.update(&n, sizeof n);
        data.update(&features, sizeof features);
        for (std::int64_t i = 0; i < n; i += 64) {
            data.update(train.inputs.col(static_cast<Eigen::Index>(i)).data(),
                sizeof(float) * static_cast<std::size_t>(features));
            if (train.isClassification())
                data.update(&train.labels[static_cast<std::size_t>(i)], sizeof train.labels[0]);
            else
                data.update(train.targets.col(static_cast<Eigen::Index>(i)).data(),
                    sizeof(float) * static_cast<std::size_t>(train.targets.rows()));
        }
        const auto d = data.finish();
        std::uint64_t mine = 0;
        std::memcpy(&mine, d.data(), sizeof mine);
        const std::vector<std::uint64_t> all = mpi.gather(mine);
        std::int64_t other = -1;
        for (std::size_t r = 1; r < all.size() && other < 0; ++r) {
            if (all[r] != all[0])
                other = static_cast<std::int64_t>(r);
        }
        other = mpi.broadcast(other);
        if (other >= 0)
            return refuse(0,
                "--engine mpi: rank " + std::to_string(other)
                    + " loaded other training data than rank 0 (a different file at the same path?); every process "
                      "must read the same data");
    }

    // 5. Every process's clock against rank 0's, for one time axis.
    mpi.estimateClockOffsets();
    if (rank == 0)
        noteIdleWorkers(run, size, size - 1);

    std::vector<std::unique_ptr<HeadlessModeRun>> runs;
    int exitCode = 0;
    try {
        for (const Mode mode : modesOf(config)) {
            // Rank 0 decides whether a next mode starts (after a stop it does not: the job has about a second
            // between mpirun's SIGTERM to its processes and its SIGKILL).
            const bool stopped = mpi.broadcast(rank == 0 && interruptSignal() != 0 && !runs.empty() ? 1 : 0) != 0;
            if (stopped)
                break;
            PreparedRun modeRun = run;
            modeRun.settings.workers = mode == Mode::Sync ? size : size - 1;
            modeRun.config.workers = modeRun.settings.workers;
            if (rank == 0)
                runs.push_back(trainMode(modeRun, mode, progress));
            else if (mode == Mode::Sync)
                serveMpiSync(modeRun.problem, modeRun.settings);
            else
                serveMpiAsync(modeRun.problem, modeRun.settings);
        }
        if (rank == 0) {
            Json engine = Json::object();
            engine["processes"] = size;
            engine["clock_offsets_seconds"] = mpi.offsets(); // each rank's clock to rank 0's (added to its times)
            engine["clock_offset_round_trips_seconds"] = mpi.roundTrips(); // the error bound is half of these
            exitCode = writeResults(run, runs, charts, engine);
        } else if (const int sig = interruptSignal()) {
            exitCode = 128 + sig;
        }
    } catch (const SgdError& e) {
        std::cerr << "sgdscope: rank " << rank << ": " << e.what() << '\n';
        mpi.abort(e.what(), 1);
    }
    // The others wait until rank 0's files are written (mpirun ends the whole job when one process leaves),
    // however long the charts and the trace take.
    mpi.setTimeout(std::max(mpi.timeout(), 600.0));
    mpi.broadcast(exitCode);
    const int sig = interruptSignal();
    if (sig == SIGTERM || sig == SIGINT) {
        // mpirun is ending the job (it passes these on a second late and kills a second after): MPI_Finalize
        // would wait for processes it is tearing down, so this one leaves without it, its files written.
        std::fflush(nullptr);
        std::_Exit(exitCode);
    }
    mpi.finalize();
    return exitCode;
}

} // namespace

} // namespace sgdscope
