#pragma once

// Value types that the controller hands from the training thread to the GUI (copies). Plain structs: the
// GUI never sees core's types (ui/PointConversion.h is the one place where core's records become these).

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <vector>

namespace sgdscope::ui {

/// The window's two columns, left and right. Each shows the mode that SessionSettings::modes names for it (sync
/// and async by default); the values below hold one entry per column.
enum Column
{
    LeftColumn = 0,
    RightColumn = 1
};
inline constexpr int modeCount = 2; // modes shown at once: one per column

struct LossPoint
{
    std::int64_t index = 0; // update (sync) or push (async)
    std::int64_t samples = 0;
    double seconds = 0.0; // the mode's own clock
    double loss = 0.0; // batch loss
    std::int64_t staleness = 0;
    double waitSeconds = 0.0; // sync: the longest wait of a worker in this update
    float smoothedLog = 0.0f; // the GUI's exponential smoothing of log(loss) up to this point (ModeSeries)
};

struct EvalPoint
{
    std::int64_t index = 0;
    std::int64_t samples = 0;
    double seconds = 0.0;
    double loss = 0.0; // whole training set
    double accuracy = -1.0;
    bool hasTest = false; // the data set has a held-out test set
    double testLoss = 0.0;
    double testAccuracy = -1.0;
};

/// How one worker spent one millisecond of its mode's clock (the timeline's unit: updates of a tiny model
/// take microseconds, so single spans would be far below a pixel).
struct TimeBin
{
    static constexpr double width = 0.001; // seconds
    enum Kind
    {
        Compute,
        Delay,
        Wait,
        Apply,
        Transfer, // copying or sending parameters and gradients
        KindCount
    };
    int worker = 0;
    std::int64_t bin = 0; // floor(seconds / width)
    std::array<float, KindCount> seconds {};
};

/// One worker's time since the last configuration change (the window's bars), in seconds.
struct WorkerTime
{
    double wall = 0.0;
    double busy = 0.0;
    double idle = 0.0;
    double apply = 0.0;
    double transfer = 0.0;
    double unaccounted = 0.0;
    std::int64_t updates = 0;
    double madeOthersWait = 0.0; // the others' waits named after this worker (RunMetrics)
    int worker = -1; // which worker (set by the bars, which may sort a distribution)
};

/// Where a mode stood when the configuration changed (a marker on its charts).
struct Marker
{
    std::int64_t index = 0;
    std::int64_t samples = 0;
    double seconds = 0.0;
    QString text;
};

struct ModeStatus
{
    bool valid = false;
    std::int64_t updates = 0;
    std::int64_t samples = 0;
    double seconds = 0.0;
    double updatesPerSecond = 0.0; // over the last second of the mode's clock
    double samplesPerSecond = 0.0;
    double lastLoss = 0.0; // latest whole-set loss, else the latest batch loss
    double lastTestAccuracy = -1.0; // latest held-out accuracy (classification with a test set)
    double idleFraction = 0.0; // the current workers, since the last configuration change
    double segmentStart = 0.0; // the mode's clock at the last configuration change (0: the run's start)
    bool virtualClock = false; // a simulated cluster: the mode's seconds are virtual
    double meanStaleness = 0.0;
    std::int64_t maxStaleness = 0;
    double meanWait = 0.0; // sync: mean of the longest wait per update
    /// Pushing modes: the mean learning rate the pushes were applied with, over the run (below the panel's with
    /// lr / max(1, staleness)); 0 if none reported one.
    double meanLearningRate = 0.0;
    bool diverged = false;
    std::int64_t divergedAt = -1;
    bool finished = false;
    bool targetReached = false;
    double targetSeconds = 0.0; // the mode's clock when it first reached the target
    std::int64_t targetSamples = 0;
    double targetAccuracy = -1.0; // the target in effect for this mode (< 0: none): test accuracy at least this
    double targetLoss = -1.0; // ... or training loss at most this
    std::vector<WorkerTime> workers; // the current workers, since the last configuration change
    /// [s] = pushes with staleness s; the last entry also counts every larger staleness (it is "s+").
    std::vector<std::int64_t> stalenessCounts;
    bool stalenessTailFolded = false; // the last entry of stalenessCounts is "s or more"
    /// Sync: updates by the longest wait in them, per decade: [0] below 1 us, [d] from 10^(d-7) s to 10^(d-6) s.
    std::vector<std::int64_t> waitDecades;
};

/// Everything that arrived since the GUI's last tick.
struct MetricsBatch
{
    std::array<std::vector<LossPoint>, modeCount> points;
    std::array<std::vector<EvalPoint>, modeCount> evals;
    std::array<std::vector<TimeBin>, modeCount> timeline;
    std::array<std::vector<Marker>, modeCount> markers;
    std::array<ModeStatus, modeCount> status;
    /// SHA-256 of each mode's parameters (summary.json's params_digest), sent when a run pauses; empty otherwise.
    std::array<QString, modeCount> digests;
    QStringList notes; // e.g. "4 chunks of 64 samples"
    QString error; // the run could not start or failed
    bool ready = false; // data loaded, training begun

    bool empty() const
    {
        for (int m = 0; m < modeCount; ++m) {
            if (!points[static_cast<std::size_t>(m)].empty() || !evals[static_cast<std::size_t>(m)].empty()
                || !timeline[static_cast<std::size_t>(m)].empty() || !markers[static_cast<std::size_t>(m)].empty()
                || status[static_cast<std::size_t>(m)].valid)
                return false;
        }
        return notes.isEmpty() && error.isEmpty() && !ready && digests[LeftColumn].isEmpty()
            && digests[RightColumn].isEmpty();
    }
};

/// The modes the two columns show and the knobs of the modes between sync and async (their run options'
/// defaults; ui/ModeChoice.h reads them by mode).
struct ColumnModes
{
    /// Core's mode names, left column first: "sync", "async", "ssp", "backup", "local-sgd" or "dc-asgd"; the two
    /// differ.
    std::array<QString, modeCount> names {QStringLiteral("sync"), QStringLiteral("async")};
    int sspBound = 3; // ssp: S, --ssp-bound
    int backupWorkers = 1; // backup: B, --backup-workers
    int localSteps = 8; // local-sgd: H, --local-steps
    double dcLambda = 0.04; // dc-asgd: lambda, --dc-lambda

    bool knobsDifferFrom(const ColumnModes& other) const
    {
        return sspBound != other.sspBound || backupWorkers != other.backupWorkers || localSteps != other.localSteps
            || dcLambda != other.dcLambda;
    }
    bool operator==(const ColumnModes& other) const { return names == other.names && !knobsDifferFrom(other); }
};

/// What the user set in the control panel and the columns' headers.
struct SessionSettings
{
    QString preset = QStringLiteral("parabola");
    /// Time to target, shown per mode: test accuracy at least this (< 0: none) ...
    double targetAccuracy = -1.0;
    /// ... or training-set loss at most this (< 0: none).
    double targetLoss = -1.0;
    int workers = 2;
    int batch = 0; // 0: the preset's
    int accum = 1;
    double learningRate = 0.0; // 0: the preset's
    int slowWorker = -1; // -1: no straggler
    double slowFactor = 4.0;
    double jitter = 0.0;
    std::uint64_t seed = 0;
    bool lockFree = false;
    /// How the pushing modes (async, ssp, dc-asgd) scale the learning rate of a push of b samples (--async-lr):
    /// "scaled" lr x b / B (sync's step per sample), "constant" lr, "staleness" lr x b / B / max(1, staleness). The
    /// team-wide modes apply lr per batch and ignore it.
    QString pushLearningRate = QStringLiteral("scaled");
    /// The batch slider counts samples per worker: each update takes workers x batch (weak scaling).
    bool batchPerWorker = false;
    /// Run options without a control of their own (from the window's command line or File > Open data), by
    /// name without dashes, in order: applied after the preset and before the controls (--data, --layers, ...).
    QList<QPair<QString, QString>> options;

    /// The value of a run option in `options` (empty if not given).
    QString option(const QString& name) const
    {
        for (const auto& [n, v] : options) {
            if (n == name)
                return v;
        }
        return {};
    }
    /// The samples each update takes (0: the preset's batch).
    int globalBatch() const { return batchPerWorker && batch > 0 ? batch * workers : batch; }

    /// Where the workers run: "threads" (this process), "sim" (a simulated cluster, in a child process) or
    /// "mpi" (processes under mpirun).
    QString engine = QStringLiteral("threads");
    QString cluster = QStringLiteral("datacenter"); // sim: a built-in cluster ...
    QString platformFile; // ... or a SimGrid platform file (when set)
    QString hostFile; // mpi: mpirun's --hostfile (empty: this machine)
    /// sim: the team-wide modes' wires (--topology): "ps" (a parameter server, every mode's), "tree", "allreduce".
    QString topology = QStringLiteral("ps");

    bool external() const { return engine != QStringLiteral("threads"); }

    /// The columns' modes and the knobs of the modes between sync and async. A column's mode needs Reset; the
    /// knobs apply live (from the next update, push or round).
    ColumnModes modes;

    /// Settings that change how a running session trains from its next update (a live change; the target
    /// only marks the charts).
    bool trainsDifferentlyFrom(const SessionSettings& other) const
    {
        return workers != other.workers || globalBatch() != other.globalBatch() || accum != other.accum
            || learningRate != other.learningRate || slowWorker != other.slowWorker || slowFactor != other.slowFactor
            || jitter != other.jitter || lockFree != other.lockFree || pushLearningRate != other.pushLearningRate
            || batchPerWorker != other.batchPerWorker || modes.knobsDifferFrom(other.modes);
    }

    /// Settings that cannot change while a run goes on (they need Reset): the model and data, the seed, the
    /// engine and the columns' modes. An MPI job's processes are its workers: any change needs a new job.
    bool needsRestartComparedTo(const SessionSettings& other) const
    {
        if (preset != other.preset || seed != other.seed || engine != other.engine || cluster != other.cluster
            || topology != other.topology || platformFile != other.platformFile || hostFile != other.hostFile
            || options != other.options || modes.names != other.modes.names)
            return true;
        if (engine == QStringLiteral("mpi"))
            return workers != other.workers || batch != other.batch || accum != other.accum
                || learningRate != other.learningRate || slowWorker != other.slowWorker
                || slowFactor != other.slowFactor || jitter != other.jitter || lockFree != other.lockFree
                || pushLearningRate != other.pushLearningRate || batchPerWorker != other.batchPerWorker
                || modes.knobsDifferFrom(other.modes);
        return false;
    }
};

} // namespace sgdscope::ui
