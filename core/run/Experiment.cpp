#include "core/run/Experiment.h"

#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/common/ThreadCoreTime.h"
#include "core/engines/TrainerFactory.h"
#include "core/engines/sim/SimCost.h"
#include "core/io/ParameterDigest.h"
#include "core/io/Safetensors.h"
#include "core/nn/Initialization.h"
#include "core/nn/ModelText.h"
#include "core/nn/kernels/Isa.h"
#include "core/run/DataSource.h"
#include "core/run/EngineShapes.h"
#include "core/run/LocalCalibration.h"
#include "core/run/MemoryEstimate.h"
#include "core/run/MpiLinkCalibration.h"
#include "core/run/SettingsCheck.h"
#include "core/train/ReductionPlan.h"

#include <chrono>

#include <cmath>
#include <omp.h>
#include <sched.h>

namespace sgdscope {

namespace {
constexpr std::int64_t maxEvaluationsPerRun = 200;

/// The engine's limits that need no measurement: the threads engine's thread count, and the local-mpi cluster's
/// job size (its probe measures Open MPI in a job of as many processes).
void checkEngineLimits(const RunConfig& config)
{
    if (config.engine == EngineKind::Threads && config.workers > maxThreadsEngineWorkers)
        throw SgdError(config.originOf("workers") + ": " + std::to_string(config.workers)
            + " is not allowed with --engine threads; use at most " + std::to_string(maxThreadsEngineWorkers)
            + " threads, or --engine sim for a simulated cluster of up to 4096 workers");
    if (config.engine == EngineKind::Sim && config.platform.empty() && config.cluster == ClusterKind::LocalMpi) {
        const bool server = needsParameterServer(config);
        if (config.workers + (server ? 1 : 0) > maxLocalMpiProcesses)
            throw SgdError(config.originOf("workers") + ": " + std::to_string(config.workers)
                + " workers is too many for --cluster local-mpi: it models an MPI job on this machine, and "
                  "measures Open MPI in a job of as many processes (workers"
                + std::string(server ? ", and the server" : "") + "); at most " + std::to_string(maxLocalMpiProcesses)
                + " processes");
    }
}

/// The engine's checks that need no measurement: its limits, and a platform file that takes the run (loaded in a
/// child process; `checks` keeps the answers, e.g. for a study's points).
void checkEngine(const RunConfig& config, PlatformFileChecks* checks)
{
    checkEngineLimits(config);
    if (config.engine != EngineKind::Sim || config.platform.empty())
        return;
    const std::string why = checks ? checks->problem(config.platform, config.workers, config.placement, config)
                                   : platformFileProblem(config.platform, config.workers, config.placement, config);
    if (!why.empty())
        throw SgdError(config.originOf("platform") + ": '" + config.platform + "' cannot be used: " + why);
}

/// The engine of a run: for the simulated cluster, its platform (checked: a platform file is loaded in a
/// child process, since SimGrid aborts on some errors) and the built-in hosts' speed.
EngineChoice engineChoiceFor(
    const RunConfig& config, const std::shared_ptr<const Problem>& problem, const TrainerSettings& settings)
{
    EngineChoice engine;
    engine.kind = config.engine;
    if (config.engine == EngineKind::Mpi)
        return engine;
    checkEngine(config, nullptr);
    if (config.engine == EngineKind::Threads)
        return engine;
    const bool server = needsParameterServer(config);
    const int hosts = config.workers + (server ? 1 : 0);
    engine.simHosts = hosts;
    engine.sim.cluster = config.cluster;
    engine.sim.platformFile = config.platform;
    engine.sim.placement = config.placement;
    if (config.platform.empty() && (config.cluster == ClusterKind::Local || config.cluster == ClusterKind::LocalMpi)) {
        const bool mpi = config.cluster == ClusterKind::LocalMpi;
        if (mpi) {
            // First (it fails at once without mpirun or the probe): how this machine's Open MPI carries the run's
            // messages, in a job of as many processes as the MPI job modelled (the server's too: a list of modes
            // is measured for its largest job).
            cpu_set_t allowed;
            CPU_ZERO(&allowed);
            const int cores = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? std::max(1, CPU_COUNT(&allowed))
                                                                                    : std::max(1, omp_get_num_procs());
            engine.sim.mpiLink = calibrateMpiLinks(
                hosts, SimCost(problem->spec, problem->layout).messageBytes, cores, config.originOf("cluster"));
        }
        // the run's sync pattern if it has one (a mode-both run's hosts are the same for both modes)
        engine.sim.calibration = calibrateLocalCluster(problem, settings, config.runsSync() ? Mode::Sync : Mode::Async);
        // local-mpi: a job of more processes than cores shares them (its ranks poll while they wait: always
        // runnable); each mode's job at its own share (SimWorld::place).
        engine.sim.hostFlops = engine.sim.calibration.hostFlops;
        if (!(engine.sim.hostFlops > 0))
            throw SgdError("--cluster " + nameOf(clusterNames, config.cluster)
                + ": the calibration on this machine measured no worker step ("
                + std::to_string(engine.sim.calibration.spans) + " compute spans); try again, or use another cluster");
    }
    return engine;
}
/// A CSV file whose one target column holds a few class numbers (scikit-learn's digits: 0 to 9) is classified, as
/// IDX data is, when the loss is the preset's (mse, made for its own data) and the model's last width is not the
/// user's or fits the classes: with cross-entropy over the classes, not mse on the numbers (which ends at the
/// labels' variance). Either way the note says what the column was taken for.
void takeClassNumbersAsClasses(PreparedRun& run, std::shared_ptr<const DataSplit>& data)
{
    RunConfig& config = run.config;
    int distinct = 0;
    const int classes = config.dataset == DatasetKind::Csv ? classesInTargets(data->train, &distinct) : 0;
    if (classes == 0)
        return;
    const std::string column = "the target column of '" + config.data + "' holds " + std::to_string(distinct)
        + " distinct whole numbers from 0 to " + std::to_string(classes - 1);
    const bool lossIsOurs = config.originOf("loss").find("(from preset") != std::string::npos;
    const bool layersAllow = config.layers.size() < 2
        || config.originOf("layers").find("(from preset") != std::string::npos || config.layers.back() == classes;
    if (!lossIsOurs || !layersAllow) {
        run.dataNote = column + ", as class labels do; they are trained on as numbers with mse"
            + (lossIsOurs ? " (--layers ends in " + std::to_string(config.layers.back()) + " outputs)"
                          : " (" + config.originOf("loss") + ")")
            + ": --loss cross-entropy classifies them";
        return;
    }
    auto classified = std::make_shared<DataSplit>();
    classified->train = withTargetsAsClasses(data->train, classes);
    if (data->test) // (a CSV has none today; one added later keeps its own)
        classified->test = withTargetsAsClasses(*data->test, classes);
    data = std::move(classified);
    config.loss = LossKind::SoftmaxCrossEntropy;
    config.origins["loss"] = config.originOf("data") + " (its target column holds class numbers)";
    run.dataNote = column + ": they are taken as " + std::to_string(classes)
        + " classes, trained with cross-entropy (--loss mse trains on them as numbers)";
}

/// Whether the engine runs every mode of the list, and the modes' own options fit the run.
void checkModes(const RunConfig& config)
{
    if (config.modes.empty())
        throw SgdError(
            config.originOf("mode") + ": no mode given; use a list of sync, async, ssp, backup, local-sgd, dc-asgd");
    if (config.runs(Mode::Backup) && config.backupWorkers >= config.workers && !config.origins.count("backup-workers"))
        throw SgdError(config.originOf("mode") + ": backup with " + std::to_string(config.workers)
            + (config.workers == 1 ? " worker" : " workers") + " and the default of "
            + std::to_string(config.backupWorkers) + " backup worker applies no gradient; "
            + (config.engine == EngineKind::Mpi ? "start mpirun -np 3 or more (a parameter server and 2 workers)"
                                                : "give --workers 2 or more")
            + ", or --backup-workers 0 (sync)");
    if (config.runs(Mode::Backup) && config.backupWorkers >= config.workers)
        throw SgdError(config.originOf("backup-workers") + ": " + std::to_string(config.backupWorkers)
            + " is not allowed with " + std::to_string(config.workers) + (config.workers == 1 ? " worker" : " workers")
            + "; use 0 to " + std::to_string(config.workers - 1) + " (each update applies at least one gradient)");
    // Across MPI processes: sync on the tree (the default there, but backup's server beside backup), on the
    // all-reduce, or on rank 0 as a parameter server (backup's server keeping every gradient); local-sgd on the tree
    // or the server.
    if (config.engine == EngineKind::Mpi && config.origins.count("topology") && config.runs(Mode::LocalSgd)
        && config.topology == Topology::AllReduce)
        throw SgdError(config.originOf("topology")
            + ": across MPI processes local-sgd averages its models on the tree or on rank 0 as a server, not on "
              "allreduce; use --topology tree (the default there) or ps, or run local-sgd on allreduce on the "
              "simulated cluster (--engine sim)");
    if (config.runs(Mode::Backup) && config.engine != EngineKind::Threads
        && config.topology != Topology::ParameterServer)
        throw SgdError(config.originOf("topology") + ": backup cannot run on " + nameOf(topologyNames, config.topology)
            + ": it applies the first P - B gradients to arrive, which only a parameter server sees arrive; use "
              "--topology ps (the default) for backup, and for the modes beside it");
}
} // namespace

std::int64_t parameterCount(const RunConfig& config, const Dataset& train)
{
    return static_cast<std::int64_t>(ParameterLayout(modelFor(config, train)).parameterCount());
}

std::vector<int> modelWidths(const RunConfig& config, const Dataset& train)
{
    std::vector<int> widths = config.layers;
    if (widths.size() < 2)
        return {train.features(), train.outputWidth()};
    // A preset's model belongs to its own data set (as its sample count does): on the user's data it keeps
    // its hidden layers and takes the data's input and output widths. The user's widths stay theirs.
    if (config.originOf("layers").find("(from preset") != std::string::npos) {
        widths.front() = train.features();
        widths.back() = train.outputWidth();
    }
    return widths;
}

std::vector<LayerSpec> modelLayers(const RunConfig& config, const Dataset& train)
{
    std::vector<LayerSpec> layers = config.model;
    // As a preset's widths (modelWidths): a preset's model on other data gives that data's outputs.
    if (config.originOf("model").find("(from preset") != std::string::npos) {
        for (auto l = layers.rbegin(); l != layers.rend(); ++l) {
            if (l->kind == LayerKind::Dense) {
                l->outputs = train.outputWidth();
                break;
            }
            if (l->weighted())
                break;
        }
    }
    return layers;
}

std::string modelSummary(const RunConfig& config, const Dataset* train)
{
    if (!config.model.empty()) {
        const std::vector<LayerSpec> layers = train ? modelLayers(config, *train) : config.model;
        return modelText(layers) + (namesActivations(layers) ? "" : " " + toString(config.activation));
    }
    const std::vector<int> widths = train ? modelWidths(config, *train) : config.layers;
    std::string text;
    for (std::size_t i = 0; i < widths.size(); ++i)
        text += (i ? "-" : "") + std::to_string(widths[i]);
    return "MLP " + (text.empty() ? std::string("(widths from the data)") : text) + " " + toString(config.activation);
}

NetworkSpec modelFor(const RunConfig& config, const Dataset& train)
{
    const bool classification = config.loss == LossKind::SoftmaxCrossEntropy;
    const std::string dataName = toString(config.dataset);
    const std::string needs = std::to_string(train.outputWidth())
        + (classification ? " outputs (one per class)" : " outputs (one per target)");
    if (config.model.empty()) {
        const NetworkSpec spec = NetworkSpec::mlp(modelWidths(config, train), config.activation, config.loss);
        const std::vector<int> widths = spec.widths();
        if (widths.front() != train.features())
            throw SgdError(config.originOf("layers") + ": the first width is " + std::to_string(widths.front())
                + " but " + dataName + " has " + std::to_string(train.features()) + " input features");
        if (widths.back() != train.outputWidth())
            throw SgdError(config.originOf("layers") + ": the last width is " + std::to_string(widths.back()) + " but "
                + dataName + " needs " + needs);
        return spec;
    }
    const TensorShape data = train.imageShape.size() == 3
        ? TensorShape::image(train.imageShape[0], train.imageShape[1], train.imageShape[2])
        : TensorShape::vector(train.features());
    const NetworkSpec spec = networkFromModel(modelLayers(config, train), data, config.activation, config.loss);
    try {
        spec.check();
    } catch (const SgdError& e) {
        throw SgdError(config.originOf("model") + ": " + e.what()
            + (data.flat ? "" : " (" + dataName + "'s samples are images of " + data.text() + ")"));
    }
    if (spec.outputs() != train.outputWidth())
        throw SgdError(config.originOf("model") + ": the last layer '" + layerText(spec.layers.back()) + "' gives "
            + std::to_string(spec.outputs()) + " outputs but " + dataName + " needs " + needs);
    return spec;
}

PreparedRun prepareRun(const RunConfig& config)
{
    return prepareRun(config, std::make_shared<DataSplit>(loadData(config)));
}

namespace {
/// prepareRun without the engine: the model, the settings and every check of them against the data.
PreparedRun prepareModelAndSettings(const RunConfig& given, std::shared_ptr<const DataSplit> data)
{
    PreparedRun run;
    run.config = given;
    takeClassNumbersAsClasses(run, data);
    const RunConfig& config = run.config;
    const Dataset& train = data->train;
    const std::string dataName = toString(config.dataset);
    const bool classification = config.loss == LossKind::SoftmaxCrossEntropy;
    if (classification && !train.isClassification())
        throw SgdError(config.originOf("loss") + ": cross-entropy needs class labels, but " + dataName
            + " has real-valued targets; use --loss mse");
    if (!classification && train.isClassification())
        throw SgdError(config.originOf("loss") + ": mse needs real-valued targets, but " + dataName
            + " has class labels; use --loss cross-entropy");

    auto problem = std::make_shared<Problem>();
    problem->spec = modelFor(config, train);
    if (!config.layers.empty())
        run.config.layers = problem->spec.widths(); // (a preset's, fitted to the data)
    if (!config.model.empty())
        run.config.model = modelLayers(config, train);

    checkModes(config);
    TrainerSettings& s = run.settings;
    s.workers = config.workers;
    s.batch = config.batch > 0 ? config.batch : static_cast<int>(std::min<std::int64_t>(train.size(), 1 << 30));
    if (s.batch > train.size())
        throw SgdError(config.originOf("batch") + ": " + std::to_string(s.batch) + " is larger than the training set ("
            + std::to_string(train.size()) + " samples of " + dataName + ")");
    s.accum = config.accum;
    s.chunk = std::min(config.chunk, s.batch);
    const int chunk = chunkSizeFor(s.chunk, s.batch);
    {
        // K micro-batches group whole chunks: with fewer chunks per worker than K, some would be empty and
        // the option would not do what it says.
        const int chunks = ChunkLayout(s.batch, chunk).chunkCount;
        const int mostPerWorker = (chunks + s.workers - 1) / s.workers;
        if (s.accum > mostPerWorker)
            throw SgdError(config.originOf("accum") + ": " + std::to_string(s.accum)
                + " micro-batches per worker need at least " + std::to_string(s.accum)
                + " chunks per worker, but a batch of " + std::to_string(s.batch) + " is " + std::to_string(chunks)
                + (chunks == 1 ? " chunk" : " chunks") + " of " + std::to_string(chunk) + " samples"
                + (s.workers > 1 ? " for " + std::to_string(s.workers) + " workers" : "") + "; use --chunk "
                + std::to_string(std::max(1, s.batch / (s.accum * s.workers))) + " or smaller, or fewer micro-batches");
    }
    const std::int64_t perEpoch = std::max<std::int64_t>(1, DataOrder::batchesPerEpoch(train.size(), s.batch));
    run.steps = config.steps > 0 ? config.steps
        : config.epochs > 0 ? std::max<std::int64_t>(1, std::llround(config.epochs * static_cast<double>(perEpoch)))
                            : perEpoch;
    if (run.steps > (std::numeric_limits<std::int64_t>::max() / 2) / s.batch)
        throw SgdError(config.originOf(config.steps > 0 ? "steps" : "epochs") + ": " + std::to_string(run.steps)
            + " updates of " + std::to_string(s.batch) + " samples is too many");
    s.sampleBudget = run.steps * s.batch;
    // Refuse what cannot fit before allocating any of it.
    const MemoryShape shape {config.runsSync(), config.runsAsync(), config.engine, omp_get_max_threads(),
        config.modesSideBySide, config.runs(Mode::LocalSgd), config.runs(Mode::DcAsgd), config.runs(Mode::Backup)};
    run.modelMemoryBytes = modelMemoryBytes(problem->spec, s, chunk, shape);
    run.residentWhenPrepared = residentBytes();
    requireMemory(run.modelMemoryBytes, config.originOf(config.model.empty() ? "layers" : "model"),
        (problem->spec.isMlp() ? "an MLP " + widthsText(problem->spec.widths()) : "the model " + problem->spec.text())
            + " trained by " + std::to_string(config.workers) + (config.workers == 1 ? " worker" : " workers") + " in "
            + (config.modes.size() == 1 ? "mode " : "modes ") + config.modesText(),
        "Use smaller layers or fewer workers.");
    problem->layout = ParameterLayout(problem->spec);
    problem->data = data;
    if (!config.init.empty())
        problem->initialParameters = readSafetensors(config.init, problem->layout);
    else
        problem->initialParameters = initialParameters(problem->spec, problem->layout, config.weightInit, config.seed);

    s.learningRate = config.lr;
    s.momentum = config.momentum;
    s.seed = config.seed;
    s.stragglers = config.slow;
    s.slowFraction = config.slowFraction;
    s.slowFractionFactor = config.slowFractionFactor;
    s.rotatingFactor = config.rotatingStraggler;
    s.heavyTail = config.heavyTail;
    s.jitter = config.jitter;
    s.sspBound = config.sspBound;
    s.backupWorkers = config.backupWorkers;
    s.localSteps = config.localSteps;
    s.dcLambda = config.dcLambda;
    s.dcAdaptive = config.dcAdaptive;
    s.asyncApply = config.asyncApply;
    s.asyncLearningRate = config.asyncLr;
    s.lrSchedule = config.lrSchedule;
    s.topology = resolvedTopology(config); // (MPI: sync's; the MPI job gives each mode its own)
    if (config.targetAccuracy >= 0 && !data->test)
        throw SgdError(config.originOf("target-accuracy") + ": " + dataName
            + " has no test set, and the target is measured on held-out data; use --target-loss");
    s.targetAccuracy = config.targetAccuracy;
    s.targetLoss = config.targetLoss;
    // Whole-set loss once per epoch, but no more than 200 times a run (it is not free on large sets).
    const std::int64_t evalEvery = config.evalEvery >= 0
        ? config.evalEvery
        : std::max(perEpoch, (run.steps + maxEvaluationsPerRun - 1) / maxEvaluationsPerRun);
    s.evalEverySamples = evalEvery * s.batch;
    validateSettings(s, *problem);
    run.problem = std::move(problem);
    return run;
}
} // namespace

PreparedRun prepareRun(const RunConfig& config, std::shared_ptr<const DataSplit> data, const EngineChoice* engine)
{
    PreparedRun run = prepareModelAndSettings(config, std::move(data));
    run.engine = engine ? *engine : engineChoiceFor(run.config, run.problem, run.settings);
    return run;
}

std::int64_t checkRunnable(
    const RunConfig& config, std::shared_ptr<const DataSplit> data, PlatformFileChecks* platformChecks)
{
    const PreparedRun run = prepareModelAndSettings(config, std::move(data));
    checkEngine(config, platformChecks);
    return run.steps;
}

ModeProgress progressAtStart(const TrainerSettings& settings, bool virtualClock)
{
    ModeProgress p;
    p.targetAccuracy = settings.targetAccuracy;
    p.targetLoss = settings.targetLoss;
    p.virtualClock = virtualClock;
    return p;
}

ModeProgress progressOf(const Trainer& trainer)
{
    ModeProgress p = progressAtStart(trainer.settings(), std::string(trainer.engineName()) == "sim");
    p.updates = trainer.updates();
    p.samples = trainer.samples();
    p.seconds = trainer.seconds();
    p.diverged = trainer.diverged();
    p.divergedAt = trainer.divergedAt();
    p.finished = trainer.finished();
    p.target = trainer.target();
    return p;
}

ModeStanding standingOf(const Trainer& trainer)
{
    return {progressOf(trainer), &trainer.metrics()};
}

ModeStanding standingOf(const ModeResult& result)
{
    return {result, &result.metrics};
}

ModeResult runMode(const PreparedRun& run, Mode mode, TrainingObserver& observer)
{
    return runMode(run, mode, observer, 0.0, {});
}

ModeResult runMode(const PreparedRun& run, Mode mode, TrainingObserver& observer, double sliceSeconds,
    const std::function<void(const Trainer&)>& afterSlice)
{
    auto trainer = makeTrainer(run.engine, mode, run.problem, run.settings);
    // Memory held back for a run that runs out of it (where `new` throws: a limit on the address space, strict
    // overcommit): freed first, so that what was done can still be reported and returned. Never touched.
    std::unique_ptr<char[]> reserve(new char[32 << 20]);
    const auto wallStart = std::chrono::steady_clock::now();
    const auto coreStart = coreTimeOfThisProcess();
    std::string failure;
    // Whose memory ran out: in an MPI job, rank 0's (this process is rank 0).
    const auto outOfMemoryOn
        = [&] { return std::string(trainer->engineName() == std::string("mpi") ? "rank 0: " : ""); };
    // After a failure, what the trainer still holds is reported. That can run out of memory too: it is tried once
    // more (the trainer goes on where it stopped), then the mode's result is kept with what was recorded, and says so.
    const auto handOver = [&] {
        for (int attempt = 0; attempt < 2; ++attempt) {
            try {
                trainer->reportUntilFailure(observer);
                return;
            } catch (const std::bad_alloc&) {
            }
        }
        failure += " (not every update could be recorded: out of memory)";
    };
    try {
        if (afterSlice) {
            while (trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), sliceSeconds}, observer)
                && !trainer->stopped() && !trainer->diverged() && !observer.stopRequested())
                afterSlice(*trainer);
        } else {
            trainer->run(RunLimits {}, observer);
        }
        trainer->endOfRun(observer);
    } catch (const RunFailure& e) {
        // A peer died, hung or failed: what was done is kept (every update counted, in the figures and the
        // recorded curve alike), and nothing more is asked of the others.
        failure = e.what();
        handOver();
    } catch (const std::bad_alloc&) {
        // Out of memory: the run cannot go on, but what it did is kept as for a failed peer (in an MPI job this is
        // rank 0, and the job then ends). Its records were allocated as it went: reporting them allocates little.
        reserve.reset();
        failure = outOfMemoryOn() + "out of memory during the run, after " + std::to_string(trainer->updates())
            + " updates";
        handOver();
    }
    if (afterSlice && failure.empty()) {
        try {
            afterSlice(*trainer); // (the last progress line)
        } catch (const std::bad_alloc&) {
            // Out of memory after the training: the line is left out, and the result kept says so (it reports
            // the last evaluation: evaluating the final parameters would need memory too).
            reserve.reset();
            failure = outOfMemoryOn() + "out of memory at the end of its training, after "
                + std::to_string(trainer->updates()) + " updates";
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    const auto coreEnd = coreTimeOfThisProcess();
    // Only a run that ended normally evaluates its final parameters: an interrupted or failed one reports its
    // last evaluation (a whole-set evaluation can take longer than the time a stopped job has left).
    std::optional<EvaluationRecord> final;
    if (failure.empty() && !(trainer->stopped() && !trainer->diverged())) {
        try {
            final = trainer->currentEvaluationUnlessStopped(observer); // (a stop signal may still cut it short)
        } catch (const std::bad_alloc&) {
            // The training is done and kept; its result reports the last evaluation before, and says why. (Before,
            // out of memory after the training, here or in the last progress line, left runMode: the mode's whole
            // result was lost.)
            reserve.reset();
            failure = outOfMemoryOn() + "out of memory in the final evaluation, after "
                + std::to_string(trainer->updates()) + " updates";
        }
    }
    reserve.reset(); // the result's own allocations (its settings, the digest, its strings) have the room now
    ModeResult result;
    result.mode = mode;
    result.engine = trainer->engineName();
    result.engineChoice = run.engine;
    if (run.engine.kind == EngineKind::Sim)
        result.simCost.emplace(run.problem->spec, run.problem->layout);
    result.settings = run.settings;
    // Report the chunk size actually used (0 in the settings means "automatic").
    result.settings.chunk = chunkSizeFor(run.settings.chunk, run.settings.batch);
    result.wallSeconds = wall;
    if (coreStart.first >= 0 && coreEnd.first >= 0) {
        result.onCoreSeconds = coreEnd.first - coreStart.first;
        result.waitedForACoreSeconds = coreEnd.second - coreStart.second;
    }
    result.failure = failure;
    if (final) {
        result.final = *final;
    } else {
        result.finalIsLastEvaluation = true;
        if (trainer->evaluated()) {
            result.final = trainer->lastEvaluation();
        } else {
            // Cut short before its first evaluation: no loss to report.
            result.final.index = -1;
            result.final.samples = -1;
            result.final.trainLoss = std::numeric_limits<double>::quiet_NaN();
        }
        result.finalIsLastEvaluation = result.final.index != trainer->updates();
    }
    // Where it ended, after its final evaluation (which may reach the target); however it ended, it is over.
    static_cast<ModeProgress&>(result) = progressOf(*trainer);
    result.finished = true;
    result.paramsDigest = parameterDigest(run.problem->layout, trainer->parameters().data());
    result.kernelPath = isaName(activeIsa());
    result.interrupted = failure.empty() && (trainer->stopped() || !final) && !trainer->diverged();
    // Moved, not copied: the trainer is done, and a run that ran out of memory could not copy them.
    result.metrics = trainer->releaseMetrics();
    result.parameters = trainer->releaseParameters();
    return result;
}

} // namespace sgdscope
