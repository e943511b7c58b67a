#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/TrainerFactory.h"
#include "core/engines/sim/SimCost.h"
#include "core/metrics/RunMetrics.h"
#include "core/run/EngineShapes.h"
#include "core/run/RunConfig.h"
#include "core/train/Problem.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sgdscope {

/// The most workers the threads engine runs (one thread each).
inline constexpr int maxThreadsEngineWorkers = 256;

/// A run configuration turned into something trainable: data loaded, model built and checked against it,
/// initial parameters drawn or read. Everything that can be wrong with the input is found here, before
/// any output is written.
struct PreparedRun
{
    RunConfig config;
    std::shared_ptr<const Problem> problem;
    TrainerSettings settings;
    EngineChoice engine;
    std::int64_t steps = 0; // sync updates
    /// What training will need on top of what the process holds when it is prepared (modelMemoryBytes), and that
    /// (its resident memory then, the data loaded; -1 if unknown).
    double modelMemoryBytes = 0.0;
    double residentWhenPrepared = -1.0;
    /// What the data's labels were taken for, when it is worth a note (a CSV column of class numbers), else empty.
    std::string dataNote;
};

/// Loads and checks; throws SgdError (naming the option, field or file) on bad input.
PreparedRun prepareRun(const RunConfig& config);
/// Everything prepareRun checks but the local clusters' measurements of this machine: for checking many runs up
/// front (a study's points). A platform file is checked too (whether it takes the run's hosts and routes: loaded in
/// a child process, whose answers `platformChecks` keeps if given). Returns the run's sync updates
/// (PreparedRun::steps). Throws SgdError as prepareRun does.
std::int64_t checkRunnable(
    const RunConfig& config, std::shared_ptr<const DataSplit> data, PlatformFileChecks* platformChecks = nullptr);
/// The model's widths on `train`: the user's --layers as given (prepareRun refuses them if they do not fit),
/// a preset's with the data's input and output widths, none: no hidden layer.
std::vector<int> modelWidths(const RunConfig& config, const Dataset& train);
/// --model's layers on `train`: the user's as given, a preset's with the data's outputs.
std::vector<LayerSpec> modelLayers(const RunConfig& config, const Dataset& train);
/// The network prepareRun trains on `train`: --model's layers, or an MLP of modelWidths(); checked against the
/// data (SgdError naming the option and the layer that does not fit).
NetworkSpec modelFor(const RunConfig& config, const Dataset& train);
/// The model in a few words, as the window's preset line shows it: "MLP 784-256-128-10 relu" (widths with the data's
/// input and output when `train` is given, "MLP (widths from the data)" when none are known), or the model line and
/// its activation ("conv6x5x5p2,maxpool2,dense10 relu"; a line that names its activations alone).
std::string modelSummary(const RunConfig& config, const Dataset* train);
/// The model's parameter count on `train`, as prepareRun builds the model.
std::int64_t parameterCount(const RunConfig& config, const Dataset& train);
/// The same with the data already loaded (loadData(config)), e.g. kept from an earlier run.
/// With `engine`: that engine as it was chosen and measured before (a simulated mode's own process takes its parent's
/// calibrations instead of measuring them again).
PreparedRun prepareRun(
    const RunConfig& config, std::shared_ptr<const DataSplit> data, const EngineChoice* engine = nullptr);
/// Where one mode's run stands: its counts and clock, whether and where it ended, the targets in effect. Plain
/// values, assigned whole wherever they go (a standing, a result, a mode's own process's stream), so that a new one
/// is written in two places only: here and where a trainer's is read (progressOf).
struct ModeProgress
{
    std::int64_t updates = 0;
    std::int64_t samples = 0;
    double seconds = 0.0; // the mode's clock: real seconds, or virtual ones on a simulated cluster
    bool diverged = false;
    std::int64_t divergedAt = -1;
    bool finished = false;
    TargetReached target;
    double targetAccuracy = -1.0; // the target in effect (< 0: none)
    double targetLoss = -1.0;
    bool virtualClock = false; // a simulated cluster's seconds
};
/// Where a mode stands before its first update: nothing done, the targets of `settings` in effect.
ModeProgress progressAtStart(const TrainerSettings& settings, bool virtualClock);
/// Where a trainer stands now.
ModeProgress progressOf(const Trainer& trainer);

/// The outcome of one mode's run, with what summary.json reports: where it ended (its progress, finished) and the
/// rest.
struct ModeResult : ModeProgress
{
    Mode mode = Mode::Sync;
    std::string engine;
    EngineChoice engineChoice;
    std::optional<SimCost> simCost; // a simulated run: what its cluster charges for the work
    TrainerSettings settings; // with the chunk size actually used
    double wallSeconds = 0.0; // real seconds the training took (evaluations included)
    // This process's threads while the mode trained: seconds on a core and runnable but waiting for one (the
    // kernel's run-queue delay, ThreadCoreTime.h; -1 where it does not say).
    double onCoreSeconds = -1.0;
    double waitedForACoreSeconds = -1.0;
    EvaluationRecord final; // of the final parameters, or the last evaluation if finalIsLastEvaluation
    /// An interrupted or failed run is not evaluated again at its end: `final` is its last evaluation, made
    /// before its last updates (at final.index updates, final.samples samples).
    bool finalIsLastEvaluation = false;
    RunMetrics metrics;
    std::string paramsDigest;
    std::string kernelPath; // the instruction-set path of the kernels that computed it (nn/kernels/Isa.h)
    ParamVector parameters;
    bool interrupted = false;
    std::string failure; // why the run could not go on (a peer died, hung or failed); empty if it did not fail

    double samplesPerSecond() const { return seconds > 0 ? static_cast<double>(samples) / seconds : 0.0; }
};

/// Where one mode's run stands: what the window's status and the progress stream show of it.
struct ModeStanding : ModeProgress
{
    const RunMetrics* metrics = nullptr; // every figure so far: the trainer's or the result's, valid while it is
};
/// Where a trainer stands now.
ModeStanding standingOf(const Trainer& trainer);
/// Where a finished run ended.
ModeStanding standingOf(const ModeResult& result);

/// Runs one mode to its end (or until the observer asks to stop) and evaluates the final parameters (at a
/// normal end only). A RunFailure during the run (a peer of an MPI job died, hung or failed) or running out of
/// memory ends it, failed, with what was done.
ModeResult runMode(const PreparedRun& run, Mode mode, TrainingObserver& observer);
/// The same in slices of about `sliceSeconds` of the mode's clock, calling `afterSlice` with the trainer after
/// each and once at the end (a live progress stream, --progress).
ModeResult runMode(const PreparedRun& run, Mode mode, TrainingObserver& observer, double sliceSeconds,
    const std::function<void(const Trainer&)>& afterSlice);

} // namespace sgdscope
