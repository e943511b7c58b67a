#include "core/run/MpiJob.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiAsyncTrainer.h"
#include "core/engines/mpi/MpiBackupTrainer.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiSyncTrainer.h"
#include "core/engines/mpi/PeerWatch.h"
#include "core/io/Sha256.h"
#include "core/nn/kernels/Isa.h"
#include "core/run/EngineShapes.h"
#include "core/run/Options.h"
#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

namespace sgdscope {

namespace {

std::uint64_t hashOf(const std::string& text)
{
    Sha256 sha;
    sha.update(text.data(), text.size());
    const auto digest = sha.finish();
    std::uint64_t hash = 0;
    std::memcpy(&hash, digest.data(), sizeof hash);
    return hash;
}

/// Every rank's problem, gathered on rank 0, said once: one line if every rank has the same, else one line per
/// distinct problem naming its ranks. Returns whether any rank had one (on every rank).
bool agreeOnProblems(MpiContext& mpi, const std::string& mine)
{
    const std::vector<std::string> all = mpi.gatherText(mine);
    std::int64_t any = 0;
    if (mpi.isRoot()) {
        std::map<std::string, std::vector<int>> ranksOf;
        for (std::size_t r = 0; r < all.size(); ++r) {
            if (!all[r].empty())
                ranksOf[all[r]].push_back(static_cast<int>(r));
        }
        any = ranksOf.empty() ? 0 : 1;
        if (ranksOf.size() == 1 && ranksOf.begin()->second.size() == all.size()) {
            std::fprintf(stderr, "sgdscope: %s\n", ranksOf.begin()->first.c_str());
        } else {
            for (const auto& [text, ranks] : ranksOf) {
                std::string who = ranks.size() == 1 ? "rank " : "ranks ";
                for (std::size_t i = 0; i < ranks.size(); ++i)
                    who += (i ? ", " : "") + std::to_string(ranks[i]);
                std::fprintf(stderr, "sgdscope: %s: %s\n", who.c_str(), text.c_str());
            }
        }
        std::fflush(stderr);
    }
    return mpi.broadcast(any) != 0;
}

/// The first rank whose `value` differs from rank 0's, or -1, on every rank.
std::int64_t firstRankDiffering(MpiContext& mpi, std::uint64_t value)
{
    const std::vector<std::uint64_t> all = mpi.gather(value);
    std::int64_t differs = -1;
    for (std::size_t r = 1; r < all.size() && differs < 0; ++r) {
        if (all[r] != all[0])
            differs = static_cast<std::int64_t>(r);
    }
    return mpi.broadcast(differs);
}

/// Ends a job refused before training: every process leaves with exit code 2, rank 0 (which said why) first.
int refused(MpiContext& mpi)
{
    mpi.finalize();
    if (!mpi.isRoot())
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 2;
}

/// What this rank finds wrong with the job's shape: the worker count follows from the processes (sync N
/// workers, async a parameter server and N - 1), stragglers must exist, the engine must be mpi.
std::string shapeProblem(RunConfig& config, int size, bool threadsSupported, const std::string& threadLevel)
{
    if (config.engine != EngineKind::Mpi)
        return "--engine " + nameOf(engineNames, config.engine) + ": under mpirun with " + std::to_string(size)
            + " processes each would train the whole run alone; use --engine mpi, or run it without mpirun";
    if (!threadsSupported)
        return "--engine mpi: this MPI grants " + threadLevel
            + ", and sgdscope's watch thread needs MPI_THREAD_MULTIPLE (Open MPI built with thread support, as "
              "Debian's is)";
    // Sync and local-sgd on the tree or the all-reduce have a worker on every process; the others, and sync and
    // local-sgd on --topology ps, a parameter server (rank 0) and N - 1.
    std::string everyProcess;
    std::string served;
    for (const Mode m : config.modes)
        (mpiJobWorkers(m, size, resolvedTopology(config, m)) == size ? everyProcess : served)
            += std::string(modeName(m)) + ", ";
    const auto listed = [](std::string names) {
        names.resize(names.size() - 2);
        return names;
    };
    if (!served.empty() && size < 2)
        return "--engine mpi: " + listed(served)
            + " needs at least 2 processes (a parameter server and a worker); start mpirun -np 2 or more, or use "
              "--mode sync with --topology tree";
    const std::string shapes = (everyProcess.empty() ? std::string()
                                                     : listed(everyProcess) + ": workers 0 to "
                                           + std::to_string(size - 1) + ", one per process")
        + (everyProcess.empty() || served.empty() ? "" : "; ")
        + (served.empty() ? std::string()
                          : listed(served) + ": a parameter server and workers 0 to " + std::to_string(size - 2));
    const bool workersGiven
        = config.origins.count("workers") && config.origins.at("workers").rfind("--workers (from", 0) != 0;
    if (workersGiven) {
        const std::string origin = config.originOf("workers");
        if (!everyProcess.empty() && !served.empty())
            return origin + ": with --engine mpi and --mode " + config.modesText()
                + " the worker count follows from the " + std::to_string(size) + " processes (" + shapes
                + "); leave it out";
        const int expected = served.empty() ? size : size - 1;
        if (config.workers != expected)
            return origin + ": " + std::to_string(config.workers) + " does not match this MPI job of "
                + std::to_string(size) + " processes (" + shapes + "); leave it out or start mpirun -np "
                + std::to_string(served.empty() ? config.workers : config.workers + 1);
    }
    config.workers = served.empty() ? size : size - 1;
    for (const Straggler& slow : config.slow) {
        const int fewest = served.empty() ? size : size - 1;
        if (slow.worker >= fewest)
            return config.originOf("slow") + ": worker " + std::to_string(slow.worker)
                + " does not exist in this MPI job of " + std::to_string(size) + " processes (" + shapes + ")";
    }
    return {};
}

/// The configuration and the build, as one number: every process must run the same (the ranks exchange raw
/// values). The kernels' order of operations decides the bits; their instruction set does not (a rank may run
/// on another CPU and take another path).
std::uint64_t configurationHash(const RunConfig& config)
{
    return hashOf(dumpJson(configJson(config), -1) + " sgdscope 0.1 kernel order " + std::to_string(kernelOrderVersion)
        + " span " + std::to_string(sizeof(Span)) + " float " + std::to_string(sizeof(float)) + " little-endian "
        + std::to_string(static_cast<int>(std::endian::native == std::endian::little)));
}

/// A digest of the training data (its size and every 64th sample): a different file at the same path on
/// another machine would train other batches without a word.
std::uint64_t dataHash(const Dataset& train)
{
    Sha256 data;
    const std::int64_t n = train.size();
    const int features = train.features();
    data.update(&n, sizeof n);
    data.update(&features, sizeof features);
    for (std::int64_t i = 0; i < n; i += 64) {
        data.update(
            train.inputs.col(static_cast<Eigen::Index>(i)).data(), sizeof(float) * static_cast<std::size_t>(features));
        if (train.isClassification())
            data.update(&train.labels[static_cast<std::size_t>(i)], sizeof train.labels[0]);
        else
            data.update(train.targets.col(static_cast<Eigen::Index>(i)).data(),
                sizeof(float) * static_cast<std::size_t>(train.targets.rows()));
    }
    const auto d = data.finish();
    std::uint64_t hash = 0;
    std::memcpy(&hash, d.data(), sizeof hash);
    return hash;
}

/// The largest message a run sends must fit one MPI call (2 GiB): sync's gradient message carries the roots
/// of a rank's subtrees, each a whole parameter vector.
std::string messageSizeProblem(const PreparedRun& run, int size)
{
    const auto floatBytes = static_cast<double>(run.problem->layout.paddedSize()) * sizeof(float);
    int roots = 1; // the others send one parameter vector (a gradient or a model)
    for (const Mode mode : run.config.modes) {
        if (mode != Mode::Sync && mode != Mode::Backup)
            continue;
        const int chunk = chunkSizeFor(run.settings.chunk, run.settings.batch);
        const ReductionPlan plan = ReductionPlan::build(ChunkLayout(run.settings.batch, chunk),
            mpiJobWorkers(mode, size, resolvedTopology(run.config, mode)), run.settings.accum,
            passSamplesFor(run.problem->spec));
        for (const WorkerReduction& w : plan.workers)
            roots = std::max(roots, w.roots);
    }
    const double largest = roots * floatBytes + (1 << 20);
    if (largest <= static_cast<double>(MpiContext::maxMessageBytes))
        return {};
    return "--layers: a message between ranks would carry " + formatNumber(std::round(largest / (1 << 20))) + " MiB ("
        + std::to_string(roots) + " parameter vector" + (roots == 1 ? "" : "s") + " of "
        + std::to_string(run.problem->layout.paddedSize())
        + " floats), and MPI takes at most 2 GiB in one call; choose a smaller model";
}

/// What the job's summary says of the MPI engine.
Json engineJson(const MpiContext& mpi)
{
    Json engine = Json::object();
    engine["processes"] = mpi.size();
    engine["thread_level"] = mpi.threadLevelName();
    engine["clock_offsets_seconds"] = mpi.offsets(); // each rank's clock to rank 0's (added to its times)
    engine["clock_offset_round_trips_seconds"] = mpi.roundTrips(); // of the first estimate: the error bound is half
    engine["clock_offset_reestimates"] = mpi.offsetReestimates(); // per rank, by the watch's beats during the run
    Json ranks = Json::object();
    for (const auto& [mode, work] : mpi.work()) {
        Json list = Json::array();
        for (const RankWork& w : work)
            list.push_back(Json {{"rank", w.rank}, {"pid", w.pid}, {"computed_samples", w.computedSamples},
                {isSyncLike(mode) ? "updates" : "pushes", w.updates},
                {"on_core_seconds", w.onCoreSeconds >= 0 ? Json(w.onCoreSeconds) : Json(nullptr)},
                {"waited_for_a_core_seconds",
                    w.waitedForACoreSeconds >= 0 ? Json(w.waitedForACoreSeconds) : Json(nullptr)}});
        ranks[modeName(mode)] = list;
    }
    // per mode: what each rank computed, counted by that rank, and how long its threads ran and waited for a core
    // (the kernel's run-queue delay: what the operating system took from it, in its waits and unaccounted time)
    engine["ranks"] = ranks;
    return engine;
}

/// Leaves at once (the job is ending: a rank is gone, or mpirun is tearing the job down; MPI_Finalize would
/// wait for processes that will not come). Only stderr is flushed: standard output's progress lines may be
/// stuck in a pipe that mpirun no longer reads.
[[noreturn]] void leave(MpiContext& mpi, int exitCode)
{
    mpi.stopWatch(false);
    std::fflush(stderr);
    std::_Exit(exitCode);
}

/// Rank 0 after a failure: stops its watch (no more MPI progress here, on a message of a rank that may be
/// leaving), tells the living ranks the job ends with `exitCode`, and waits (a few seconds at most) for those on
/// this host to end, so that none is still reading a message out of its memory when it leaves.
void endJobForAll(MpiContext& mpi, int exitCode)
{
    mpi.stopWatch(false);
    if (PeerWatch* watch = mpi.watch()) {
        watch->endJob(exitCode);
        watch->awaitLocalPeersEnded(3.0);
    }
}

/// Rank 0 after a failure: says which rank failed and why, writes summary.json and metrics.csv before any
/// further MPI call (MPI's progress on a dead peer's half-received message can crash a process), tells the
/// others it is ending (so that its silence while it draws the charts is not taken for a hang), writes the
/// rest, ends the job.
[[noreturn]] void endFailedJob(MpiContext& mpi, const PreparedRun& run,
    std::vector<std::unique_ptr<HeadlessModeRun>>& runs, const ChartWriter& charts, const std::string& failure)
{
    std::fprintf(stderr, "sgdscope: %s; the job ends, and %s/summary.json says what was done\n", failure.c_str(),
        run.config.out.c_str());
    std::fflush(stderr);
    // The mode that was running when the problem stopped it failed (it was not interrupted by a signal), and its
    // failure is the job's, as the watch named it (an MPI call may have failed first, with less to say).
    if (!runs.empty()) {
        ModeResult& last = runs.back()->result;
        if (!last.failure.empty() || (last.interrupted && interruptSignal() == 0)) {
            last.failure = failure;
            last.interrupted = false;
        }
    }
    mpi.stopWatch(false);
    PeerWatch* watch = mpi.watch();
    try {
        writeResults(run, runs, charts, engineJson(mpi), failure, [&] {
            if (watch)
                watch->announceEnding();
        });
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgdscope: rank 0: %s, while writing the failed run's files\n", e.what());
    }
    endJobForAll(mpi, 1);
    leave(mpi, 1);
}

/// A rank other than 0 after a failure: what its watch saw (rank 0 ended the job, or is gone or silent), or
/// an error of its own, which it tells rank 0, which says it once and ends the job. This rank says something
/// only when rank 0 cannot.
[[noreturn]] void endFailedPeer(MpiContext& mpi, const std::string& error)
{
    PeerWatch* watch = mpi.watch();
    if (!watch) {
        std::fprintf(stderr, "sgdscope: rank %d: %s\n", mpi.rank(), error.c_str());
        leave(mpi, 1);
    }
    // An MPI call may fail before the watch has seen why (rank 0 gone, or this process stopped for so long that
    // the others gave it up): what the watch finds decides what, if anything, this rank says.
    watch->settle();
    const bool ownError = !watch->hasProblem();
    if (ownError)
        watch->reportError(error);
    // Rank 0 ends the job (its watch stops it at once), or it is gone or silent: the watch tells which.
    while (!watch->hasProblem())
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const PeerProblem problem = *watch->problem();
    if (problem.kind == PeerProblem::Kind::Ended)
        leave(mpi, problem.exitCode);
    // This process was stopped (or starved) so long that rank 0 gave it up and said so: what it finds now is the
    // job ending because of it, and it says nothing more.
    if (problem.kind == PeerProblem::Kind::Stalled)
        leave(mpi, 1);
    // Rank 0 is gone or silent: the first other rank says so (and this rank's own error, which rank 0 never
    // said).
    if (ownError)
        std::fprintf(stderr, "sgdscope: rank %d: %s\n", mpi.rank(), error.c_str());
    if (mpi.rank() == 1)
        std::fprintf(stderr, "sgdscope: rank 1: %s; %s\n", problem.describe(watch->silence()).c_str(),
            problem.kind == PeerProblem::Kind::Silent ? "the job ends (rank 0 writes what was done if it runs again)"
                                                      : "the job ends without results (rank 0 writes them)");
    leave(mpi, 1);
}

/// The job's failure as rank 0 names it: a failure of the MPI calls themselves ("the MPI connection with rank 1
/// failed") is named after what the watch finds of it once it has looked at every peer again (rank 1 gone, or this
/// process stopped so long that the others gave it up); rank 0's own errors stay as they are.
std::string namedFailure(MpiContext& mpi, const std::string& failure, bool fromPeers)
{
    PeerWatch* watch = mpi.watch();
    if (!watch || !fromPeers)
        return failure;
    watch->settle();
    return watch->hasProblem() ? watch->problem()->describe(watch->silence()) : failure;
}

int runJob(MpiContext& mpi, const RunConfig* given, const std::string& givenProblem, const ChartWriter& charts,
    const ProgressFactory& progress)
{
    const int rank = mpi.rank();
    const int size = mpi.size();

    // 1. The command line: every rank's problem reaches the user, once; then every rank must run the same.
    RunConfig config = given ? *given : RunConfig {};
    std::string problem = givenProblem;
    if (problem.empty())
        problem = shapeProblem(config, size, mpi.threadsSupported(), mpi.threadLevelName());
    if (agreeOnProblems(mpi, problem))
        return refused(mpi);
    if (const std::int64_t differs = firstRankDiffering(mpi, configurationHash(config)); differs >= 0) {
        if (rank == 0)
            std::fprintf(stderr,
                "sgdscope: --engine mpi: rank %lld was given other options than rank 0 (its configuration "
                "differs); give every process the same command line\n",
                static_cast<long long>(differs));
        return refused(mpi);
    }

    // 2. From here a peer is given up only when it is gone, silent or failed.
    //    A stop signal to any rank ends the job as one to rank 0 does (the watch passes it on).
    mpi.startWatch(
        config.peerTimeout, [] { return interruptSignal(); }, [](int r, int sig) { interruptForRank(r, sig); });

    // 3. Each process loads its own copy of the data and checks everything; the ranks that fail say why.
    //    The output paths are checked now (a bad --out is refused before anything loads) but the folder is made
    //    only once training is about to begin: a job refused or failed before it leaves nothing behind.
    PreparedRun run;
    problem.clear();
    std::vector<std::string> madeFolders; // rank 0: the output folders this job made
    try {
        run = prepareRun(config);
        problem = messageSizeProblem(run, size);
        if (rank == 0 && problem.empty())
            removeFolders(prepareOutputs(config));
    } catch (const std::bad_alloc&) {
        problem = "out of memory while loading the data and building the model";
    } catch (const std::exception& e) {
        problem = e.what();
    }
    try {
        // Interrupted before training began (rank 0 decides for all): there is nothing to summarise.
        if (mpi.broadcast(rank == 0 && interruptSignal() != 0 ? 1 : 0) != 0) {
            if (rank == 0)
                std::fprintf(stderr, "sgdscope: interrupted before training began; nothing written\n");
            const int sig = interruptSignal();
            if (sig == SIGTERM || sig == SIGINT)
                leave(mpi, interruptedExitCode(sig));
            mpi.finalize();
            return sig != 0 ? interruptedExitCode(sig) : 0;
        }
        if (agreeOnProblems(mpi, problem))
            return refused(mpi);
        if (const std::int64_t other = firstRankDiffering(mpi, dataHash(run.problem->train())); other >= 0) {
            if (rank == 0)
                std::fprintf(stderr,
                    "sgdscope: --engine mpi: rank %lld loaded other training data than rank 0 (a different file at "
                    "the same path?); every process must read the same data\n",
                    static_cast<long long>(other));
            return refused(mpi);
        }
        // Every process's clock against rank 0's, for one time axis.
        mpi.estimateClockOffsets();
        std::string outputs;
        if (rank == 0) {
            try {
                madeFolders = prepareOutputs(config);
            } catch (const SgdError& e) {
                outputs = e.what();
            }
        }
        if (agreeOnProblems(mpi, outputs))
            return refused(mpi);
    } catch (const RunFailure& e) {
        // A rank died, hung or failed before training: nothing to summarise, and nothing left behind.
        if (rank == 0) {
            removeFolders(madeFolders);
            std::fprintf(stderr, "sgdscope: %s, before training began; nothing written\n",
                namedFailure(mpi, e.what(), true).c_str());
            // The living ranks are told the job ends, so that none takes rank 0's end for its death and says so.
            endJobForAll(mpi, 1);
        } else if (PeerWatch* watch = mpi.watch(); watch && mpi.rank() == 1) {
            // Rank 0 cannot say it is gone: the first other rank does (nothing if rank 0 ended the job, or if this
            // process was itself stopped so long that rank 0 gave it up and said so).
            watch->settle();
            if (const auto p = watch->problem();
                p && (p->kind == PeerProblem::Kind::Gone || p->kind == PeerProblem::Kind::Silent))
                std::fprintf(stderr, "sgdscope: rank 1: %s, before training began; nothing written\n",
                    p->describe(watch->silence()).c_str());
        }
        leave(mpi, 1);
    }
    if (rank == 0) {
        // (The sync-like modes' largest team: every process on the tree, all but the server on rank 0's.)
        int syncLikeWorkers = size - 1;
        for (const Mode m : config.modes)
            if (isSyncLike(m))
                syncLikeWorkers = std::max(syncLikeWorkers, mpiJobWorkers(m, size, resolvedTopology(config, m)));
        noteBeforeTraining(run, config, syncLikeWorkers, size - 1);
    }

    // 4. Rank 0 trains and writes; the others serve it.
    std::vector<std::unique_ptr<HeadlessModeRun>> runs;
    runs.reserve(modesOf(config).size()); // keeping a mode's result takes no memory when it ran out
    std::string failure;
    bool fromPeers = false; // a RunFailure (a peer, or the MPI calls with it), not this rank's own error
    try {
        for (const Mode mode : modesOf(config)) {
            // Rank 0 decides whether a next mode starts (after a stop or a failure it does not).
            const bool stopped
                = mpi.broadcast(rank == 0 && (interruptSignal() != 0 || !failure.empty()) && !runs.empty() ? 1 : 0)
                != 0;
            if (stopped)
                break;
            PreparedRun modeRun = run;
            modeRun.settings.topology = resolvedTopology(run.config, mode);
            modeRun.settings.workers = mpiJobWorkers(mode, size, modeRun.settings.topology);
            modeRun.config.workers = modeRun.settings.workers;
            if (rank == 0) {
                runs.push_back(trainMode(modeRun, mode, progress));
                failure = runs.back()->result.failure;
                fromPeers = !failure.empty();
                if (!failure.empty())
                    break;
            } else if (mode == Mode::Sync && modeRun.settings.topology == Topology::ParameterServer) {
                serveMpiBackup(modeRun.problem, modeRun.settings); // rank 0 keeps every gradient: sync
            } else if (mode == Mode::Sync || mode == Mode::LocalSgd) {
                serveMpiSync(modeRun.problem, modeRun.settings, mode);
            } else if (mode == Mode::Async || mode == Mode::Ssp || mode == Mode::DcAsgd) {
                serveMpiAsync(modeRun.problem, modeRun.settings);
            } else if (mode == Mode::Backup) {
                serveMpiBackup(modeRun.problem, modeRun.settings);
            } else {
                throw SgdError(std::string("--mode: ") + modeName(mode) + " does not run across MPI processes");
            }
        }
    } catch (const RunFailure& e) {
        failure = e.what();
        fromPeers = true;
    } catch (const std::bad_alloc&) {
        failure = (rank == 0 ? "rank 0: " : "") + std::string("out of memory during the run");
    } catch (const std::exception& e) {
        failure = (rank == 0 ? "rank 0: " : "") + std::string(e.what());
    }
    // A problem the watch found may have stopped the last mode at a boundary (as a signal would) without a wait
    // to throw it: it is the job's failure all the same.
    if (failure.empty() && rank == 0 && mpi.watch() && mpi.watch()->hasProblem())
        failure = mpi.watch()->problem()->describe(mpi.watch()->silence());
    if (!failure.empty()) {
        if (rank == 0)
            endFailedJob(mpi, run, runs, charts, namedFailure(mpi, failure, fromPeers));
        endFailedPeer(mpi, failure);
    }
    // Every send of runs that did not fail completed: else this process frees no message buffer any more (a leak
    // that a long job would feel), and the engine has a bug to fix.
    if (mpiSendAbandonedFlag().load())
        std::fprintf(stderr,
            "sgdscope: rank %d: internal error: a run that did not fail left a send unfinished (its message buffers "
            "are no longer freed)\n",
            rank);

    // 5. Rank 0 writes every file while the others wait (mpirun ends the whole job when one process leaves);
    //    every process ends with rank 0's exit code.
    int exitCode = 0;
    if (rank == 0) {
        try {
            exitCode = writeResults(run, runs, charts, engineJson(mpi));
        } catch (const std::bad_alloc&) {
            std::fprintf(
                stderr, "sgdscope: rank 0: out of memory while writing the results in %s\n", run.config.out.c_str());
            exitCode = 1;
        } catch (const std::exception& e) {
            // A file that cannot be written (a full disk): said once, here, and the others end with this exit code
            // instead of finding rank 0 gone.
            std::fprintf(stderr, "sgdscope: %s\n", e.what());
            exitCode = 1;
        }
        std::fflush(stderr);
    }
    // The job's end, in three steps, so that no rank takes another's end for its death: a rank that had no core
    // when rank 0 sent it the exit code (a machine busy with other work) found rank 0's process gone first.
    // 1. Rank 0 sends the exit code (the others wait here, watching rank 0 while it writes).
    bool known = rank == 0;
    try {
        exitCode = static_cast<int>(mpi.broadcast(exitCode));
        known = true;
        // 2. Every rank answers once it has it; 3. rank 0 says goodbye once every rank has answered, and leaves.
        // The others leave after the goodbye (or once rank 0 is gone): none leaves while rank 0 still waits.
        (void)mpi.gather(0);
        (void)mpi.broadcast(0);
    } catch (const RunFailure& e) {
        // Rank 0's results are written and the others know the exit code: a rank that leaves now is no failure.
        if (!known)
            endFailedPeer(mpi, e.what());
    }
    mpi.stopWatch();
    const int sig = interruptSignal();
    if (sig == SIGTERM || sig == SIGINT) {
        // mpirun is ending the job (it passes these on and kills a second after): MPI_Finalize would wait for
        // processes it is tearing down, so this one leaves without it, its files written.
        leave(mpi, exitCode);
    }
    mpi.finalize();
    return exitCode;
}
} // namespace

int runMpiJob(
    const RunConfig* given, const std::string& givenProblem, const ChartWriter& charts, const ProgressFactory& progress)
{
    MpiContext& mpi = MpiContext::init();
    // Whatever goes wrong on this rank is said once, with its rank, and ends the job non-zero; rank 0 tells the
    // others it ends the job, so that none of them takes its end for a death and says so too.
    try {
        return runJob(mpi, given, givenProblem, charts, progress);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "sgdscope: rank %d: out of memory\n", mpi.rank());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgdscope: rank %d: %s\n", mpi.rank(), e.what());
    }
    if (mpi.isRoot())
        endJobForAll(mpi, 1);
    leave(mpi, 1);
}

} // namespace sgdscope
