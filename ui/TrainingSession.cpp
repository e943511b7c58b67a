#include "ui/TrainingSession.h"

#include "ui/ModeChoice.h"
#include "ui/PointConversion.h"
#include "ui/SliceObserver.h"

#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/EngineShapes.h"
#include "core/run/Experiment.h"
#include "core/run/LiveModes.h"
#include "core/run/Options.h"
#include "core/run/SettingsCheck.h"

#include <QStringList>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <sys/resource.h>
#include <unistd.h>

namespace sgdscope::ui {

namespace {
constexpr double sliceSeconds = 0.04; // of each mode's clock, alternating
constexpr int trainingNice = 10; // the window's thread stays ahead of the workers (weight 1024 against 110)

/// A marker's text on the charts of a column training `mode`: the settings, and the mode's own knob.
QString settingsText(const SessionSettings& s, Mode mode)
{
    QString text = QStringLiteral("P=%1 B=%2 K=%3 lr=%4")
                       .arg(s.workers)
                       .arg(s.batch)
                       .arg(s.accum)
                       .arg(s.learningRate, 0, 'g', 3);
    if (s.slowWorker >= 0)
        text += QStringLiteral(" w%1\u00d7%2").arg(s.slowWorker).arg(s.slowFactor, 0, 'g', 3);
    if (s.jitter > 0)
        text += QStringLiteral(" jitter %1").arg(s.jitter, 0, 'g', 2);
    if (s.pushLearningRate != QStringLiteral("scaled") && !isSyncLike(mode))
        text += QLatin1Char(' ') + s.pushLearningRate;
    if (const QString knob = knobLabel(s.modes, mode); !knob.isEmpty())
        text += QLatin1Char(' ') + knob;
    return text;
}

TrainerSettings trainerSettings(const PreparedRun& run, const SessionSettings& s)
{
    TrainerSettings t = run.settings;
    const auto n = run.problem->train().size();
    t.workers = s.workers;
    // Not cut to the training set: a batch larger than it is refused (validateSettings), as headless does.
    const std::int64_t batch = s.globalBatch();
    t.batch = batch > 0 ? static_cast<int>(std::min<std::int64_t>(batch, std::numeric_limits<int>::max()))
                        : run.settings.batch;
    t.accum = s.accum;
    t.learningRate = s.learningRate > 0 ? s.learningRate : run.settings.learningRate;
    // Stragglers given as run options (several --slow) stay; the panel's slow worker comes on top.
    std::erase_if(t.stragglers, [&](const Straggler& g) { return g.worker >= s.workers || g.worker == s.slowWorker; });
    if (s.slowWorker >= 0 && s.slowWorker < s.workers && s.slowFactor > 1.0)
        t.stragglers.push_back({s.slowWorker, s.slowFactor});
    t.jitter = s.jitter;
    // The modes' knobs (each trainer reads its own mode's).
    t.sspBound = s.modes.sspBound;
    t.backupWorkers = s.modes.backupWorkers;
    t.localSteps = s.modes.localSteps;
    t.dcLambda = s.modes.dcLambda;
    t.asyncApply = s.lockFree ? AsyncApply::LockFree : AsyncApply::Lock;
    // Read per push (threads) or per slice (the simulated parameter server): live from the next one.
    t.asyncLearningRate
        = valueNamed(asyncLearningRateNames, s.pushLearningRate.toStdString()).value_or(AsyncLearningRate::Scaled);
    // The automatic chunk rule unless --chunk was given, as headless: a window's run and its headless twin
    // give the same bits.
    t.chunk = run.config.chunk > 0 ? std::min(run.config.chunk, t.batch) : 0;
    t.sampleBudget = std::numeric_limits<std::int64_t>::max(); // the window trains until paused or reset
    t.evalEverySamples = std::max<std::int64_t>(n, 200LL * t.batch);
    t.targetAccuracy = run.problem->data->test && run.problem->train().isClassification() ? s.targetAccuracy : -1.0;
    t.targetLoss = s.targetLoss;
    t.stopAtTarget = false; // the window marks the time to target and trains on
    return t;
}

QStringList notesFor(const LiveModes& live, const TrainerSettings& t)
{
    QStringList notes;
    for (const std::string& note : live.notes(t))
        notes << QString::fromStdString(note);
    return notes;
}

std::string cacheKey(const RunConfig& c)
{
    std::string targets;
    for (const auto& t : c.targets)
        targets += t + ",";
    // Only generated data depends on the seed.
    const std::string seed = isGenerated(c.dataset) ? std::to_string(c.seed) : std::string();
    return toString(c.dataset) + "|" + c.data + "|" + std::to_string(c.samples) + "|" + seed + "|" + toString(c.loss)
        + "|" + targets + "|" + std::to_string(static_cast<int>(c.csvHeader));
}

/// Applies settings changed in the window to both modes from their next update, and marks the change.
void applyPending(SessionShared& shared, const PreparedRun& run, const SessionSettings& pending, LiveModes& live,
    std::array<std::unique_ptr<SliceObserver>, modeCount>& observers)
{
    const TrainerSettings settings = trainerSettings(run, pending);
    live.reconfigure(settings);
    for (int m = 0; m < modeCount; ++m) {
        const ModeStanding standing = live.standing(m);
        observers[static_cast<std::size_t>(m)]->setSegmentStart(standing.seconds);
        std::lock_guard lock(shared.mutex);
        shared.staging.markers[static_cast<std::size_t>(m)].push_back(
            {standing.updates, standing.samples, standing.seconds, settingsText(pending, live.mode(m))});
        shared.staging.notes = notesFor(live, settings);
    }
}
} // namespace

std::shared_ptr<const DataSplit> cachedData(DataCache& cache, const RunConfig& config)
{
    if (auto data = findCachedData(cache, config))
        return data;
    auto data = std::make_shared<DataSplit>(loadData(config));
    std::lock_guard lock(cache.mutex);
    // The two data sets used last (Fashion-MNIST is 220 MB): runs and first looks that still use an older one
    // keep their own reference.
    const std::string key = cacheKey(config);
    cache.sets[key] = data;
    std::erase(cache.order, key);
    cache.order.push_back(key);
    while (cache.order.size() > 2) {
        cache.sets.erase(cache.order.front());
        cache.order.erase(cache.order.begin());
    }
    return data;
}

std::shared_ptr<const DataSplit> findCachedData(DataCache& cache, const RunConfig& config)
{
    std::lock_guard lock(cache.mutex);
    const auto it = cache.sets.find(cacheKey(config));
    return it == cache.sets.end() ? nullptr : it->second;
}

RunConfig sessionConfig(const SessionSettings& settings)
{
    RunConfig config = sessionOptionsConfig(settings);
    config.modesSideBySide = true;
    // The panel's batch, checked by prepareRun as headless checks it. (Its micro-batches are not: the window
    // takes any K its slider offers, live as at Start; micro-batches beyond a worker's chunks stay empty.)
    if (settings.globalBatch() > 0) {
        config.batch = settings.globalBatch();
        config.origins["batch"] = settings.batchPerWorker ? "--batch-per-worker " + std::to_string(settings.batch)
                + " x " + std::to_string(settings.workers) + " workers"
                                                          : std::string("--batch");
    }
    return config;
}

RunConfig sessionOptionsConfig(const SessionSettings& settings)
{
    ConfigBuilder builder;
    builder.applyPreset(settings.preset.toStdString(), "preset");
    for (const auto& [name, value] : settings.options)
        builder.applyOption(name.toStdString(), value.toStdString());
    builder.applyOption("seed", std::to_string(settings.seed));
    builder.applyOption("workers", std::to_string(settings.workers));
    // The columns' modes and the knobs of those shown, as a headless run of these modes takes them: the same
    // checks and messages (two different modes; backup's B below the workers, at Start).
    builder.applyOption("mode",
        (settings.modes.names[LeftColumn] + QLatin1Char(',') + settings.modes.names[RightColumn]).toStdString());
    for (int c = 0; c < modeCount; ++c) {
        const Mode m = columnMode(settings.modes, c);
        if (const char* knob = knobOption(m))
            builder.applyOption(knob, knobText(settings.modes, m).toStdString());
    }
    if (settings.engine == QStringLiteral("sim")) {
        builder.applyOption("engine", "sim");
        if (settings.platformFile.isEmpty())
            builder.applyOption("cluster", settings.cluster.toStdString());
        else
            builder.applyOption("platform", settings.platformFile.toStdString());
        if (settings.topology != QStringLiteral("ps") && teamWideColumn(settings))
            builder.applyOption("topology", settings.topology.toStdString());
    } else if (settings.engine == QStringLiteral("mpi")) {
        builder.applyOption("engine", "mpi");
    }
    return builder.resolve();
}

MetricsBatch previewSession(std::shared_ptr<DataCache> cache, SessionSettings settings, bool asHeadless)
{
    MetricsBatch batch;
    try {
        RunConfig config = sessionConfig(settings);
        if (asHeadless)
            config.accum = settings.accum; // and the micro-batches, as a headless run checks them
        if (settings.engine == QStringLiteral("mpi") && mpiRunnableColumns(settings).isEmpty())
            throw SgdError("an MPI job of 1 process runs sync and local-sgd only: "
                + settings.modes.names[LeftColumn].toStdString() + " and "
                + settings.modes.names[RightColumn].toStdString()
                + " need a parameter server and a worker; use 2 processes or more, or pick sync or local-sgd in a "
                  "column");
        if (settings.engine == QStringLiteral("mpi") && mpiRunnableColumns(settings).size() == modeCount
            && settings.modes.backupWorkers > maxBackupWorkers(settings)
            && (settings.modes.names[LeftColumn] == QStringLiteral("backup")
                || settings.modes.names[RightColumn] == QStringLiteral("backup"))) {
            // Headless refuses it in the job: said now, not cut to what the job allows.
            const int workers = maxBackupWorkers(settings) + 1;
            throw SgdError("--backup-workers: " + std::to_string(settings.modes.backupWorkers)
                + " is not allowed in an MPI job of " + std::to_string(settings.workers)
                + " processes, whose backup runs on a parameter server and " + std::to_string(workers)
                + (workers == 1 ? " worker" : " workers") + "; use 0 to " + std::to_string(workers - 1)
                + " (each update applies at least one gradient)");
        }
        if (settings.engine == QStringLiteral("sim") && !settings.platformFile.isEmpty()) {
            // A platform file is read by the simulation's child at Start: its problems are said now.
            const std::string why
                = platformFileProblem(settings.platformFile.toStdString(), settings.workers, config.placement, config);
            if (!why.empty())
                throw SgdError("--platform: " + why);
        }
        // The initial parameters are the same on every engine: the first look needs no cluster or job. The
        // session's batch and micro-batches are checked as headless checks them (prepareRun).
        // (More workers than the threads engine runs are the simulated cluster's: Start checks them there, and
        // backup's B with them, which the cap must not make too many: 300 of 512 is not 300 of 256.)
        config.engine = EngineKind::Threads;
        if (config.workers > maxThreadsEngineWorkers) {
            config.workers = maxThreadsEngineWorkers;
            config.backupWorkers = std::min(config.backupWorkers, config.workers - 1);
        }
        PreparedRun run = prepareRun(config, cachedData(*cache, config));
        TrainerSettings t = trainerSettings(run, settings);
        validateSettings(t, *run.problem); // what Start checks
        checkBackupWorkers(t, // of all the session's workers, not of the first look's
            settings.modes.names[LeftColumn] == QStringLiteral("backup")
                || settings.modes.names[RightColumn] == QStringLiteral("backup"));
        const EvaluationRecord record = evaluateInitialParameters(run, t);
        for (int m = 0; m < modeCount; ++m)
            batch.evals[static_cast<std::size_t>(m)].push_back(evalPoint(record));
    } catch (const std::exception& e) {
        batch.error = QString::fromUtf8(e.what());
    }
    return batch;
}

int maxWindowWorkers(const QString& engine)
{
    if (engine == QStringLiteral("sim"))
        return 1024;
    if (engine == QStringLiteral("mpi"))
        return 64;
    return option("workers").windowMax;
}

void runTrainingSession(
    std::shared_ptr<SessionShared> shared, std::shared_ptr<DataCache> cache, SessionSettings settings)
{
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), trainingNice); // OpenMP workers inherit it
    auto report = [&](auto&& fill) {
        std::lock_guard lock(shared->mutex);
        fill(shared->staging);
    };
    try {
        const bool simulated = settings.engine == QStringLiteral("sim");
        if (!simulated && settings.engine != QStringLiteral("threads"))
            throw SgdError("the window runs the " + settings.engine.toStdString()
                + " engine in other processes, not in a training thread");
        const RunConfig config = sessionConfig(settings);
        PreparedRun run = prepareRun(config, cachedData(*cache, config));
        if (simulated && settings.platformFile.isEmpty()) {
            // Hosts for every worker count the slider allows, and a parameter server: live changes need no new
            // platform (a process has one).
            run.engine.simHosts = std::max(run.engine.simHosts, maxWindowWorkers(settings.engine) + 1);
        }
        if (shared->stop)
            return;
        const TrainerSettings initial = trainerSettings(run, settings);
        LiveModes live(run, {columnMode(settings.modes, LeftColumn), columnMode(settings.modes, RightColumn)}, initial);
        std::array<std::unique_ptr<SliceObserver>, modeCount> observers;
        for (int m = 0; m < modeCount; ++m)
            observers[static_cast<std::size_t>(m)]
                = std::make_unique<SliceObserver>(m, shared->mutex, shared->staging, shared->stop);
        // Both curves start at the initial weights' whole-set loss (the first look's, before Start).
        for (int m = 0; m < modeCount && !shared->stop.load(); ++m) {
            live.evaluateNow(m, *observers[static_cast<std::size_t>(m)]);
            observers[static_cast<std::size_t>(m)]->flush(live.standing(m));
        }
        report([&](MetricsBatch& b) {
            b.ready = true;
            b.notes = notesFor(live, initial);
        });
        bool digestsSent = false;
        while (!shared->stop.load()) {
            if (shared->paused.load()) {
                if (!digestsSent) {
                    // Where each mode stands, as summary.json's params_digest (Run > Copy command line's check).
                    std::array<QString, modeCount> digests;
                    for (int m = 0; m < modeCount; ++m)
                        digests[static_cast<std::size_t>(m)] = QString::fromStdString(live.digest(m));
                    report([&](MetricsBatch& b) { b.digests = digests; });
                    digestsSent = true;
                }
                std::unique_lock lock(shared->mutex);
                shared->wake.wait_for(lock, std::chrono::milliseconds(50));
                continue;
            }
            digestsSent = false;
            std::optional<SessionSettings> pending;
            {
                std::lock_guard lock(shared->mutex);
                pending.swap(shared->pending);
            }
            if (pending) {
                try {
                    applyPending(*shared, run, *pending, live, observers);
                } catch (const SgdError& e) {
                    // The run goes on with what it had (e.g. more workers than a platform file's hosts).
                    report([&](MetricsBatch& b) {
                        b.notes = QStringList {QStringLiteral("Not applied: %1").arg(QString::fromUtf8(e.what()))};
                    });
                }
            }
            bool anyRunning = false;
            for (int m = 0; m < modeCount && !shared->stop.load(); ++m) {
                if (!live.runSlice(m, *observers[static_cast<std::size_t>(m)], sliceSeconds))
                    continue;
                anyRunning = true;
                observers[static_cast<std::size_t>(m)]->flush(live.standing(m));
            }
            if (!anyRunning) {
                // Both columns' modes have stopped (diverged): wait for a reset.
                shared->finished = true;
                std::unique_lock lock(shared->mutex);
                shared->wake.wait_for(lock, std::chrono::milliseconds(100));
            }
        }
    } catch (const std::exception& e) {
        report([&](MetricsBatch& b) { b.error = QString::fromUtf8(e.what()); });
        shared->finished = true;
    }
}

} // namespace sgdscope::ui
