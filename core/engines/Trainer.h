#pragma once

#include "core/data/DataOrder.h"
#include "core/metrics/RunMetrics.h"
#include "core/metrics/TrainingObserver.h"
#include "core/metrics/WindowCutter.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/train/Evaluator.h"
#include "core/train/LocalSgd.h"
#include "core/train/Problem.h"
#include "core/train/StragglerModel.h"
#include "core/train/TrainerSettings.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace sgdscope {

/// Limits of one call to Trainer::run (a time slice in the window, the whole run headless).
struct RunLimits
{
    std::int64_t maxUpdates = std::numeric_limits<std::int64_t>::max();
    double maxSeconds = std::numeric_limits<double>::infinity(); // of the mode's clock
};

/// How many steps of `per` samples take `from` to at least `target`, at least one; no overflow for a
/// `target` of int64 max (an unbounded budget).
inline std::int64_t stepsToReach(std::int64_t from, std::int64_t target, std::int64_t per)
{
    const std::int64_t remaining = target - from;
    if (remaining <= 0)
        return 1;
    return std::max<std::int64_t>(1, remaining / per + (remaining % per != 0 ? 1 : 0));
}

/// When a run first reached its target (--target-accuracy / --target-loss).
struct TargetReached
{
    bool reached = false;
    double seconds = 0.0; // the mode's clock (training time, evaluations not counted)
    std::int64_t samples = 0;
    std::int64_t updates = 0;
};
/// Whether an evaluation meets a target (< 0: none): its test accuracy for --target-accuracy, its training loss for
/// --target-loss.
inline bool meetsTarget(const EvaluationRecord& e, double targetAccuracy, double targetLoss)
{
    return (targetAccuracy >= 0 && e.testAccuracy >= targetAccuracy) || (targetLoss >= 0 && e.trainLoss <= targetLoss);
}

/// The seam between the training math and who computes it where and when. One Trainer runs one mode (sync
/// or async) on one engine (threads here; a simulated cluster, MPI ranks). What every engine shares lives
/// here: the parameters, the data order, the counters, the evaluation, the straggler model, and the event
/// stream: an engine reports what happened through reportWorkerTime() and reportUpdate(), which feed the
/// one derivation of every figure (metrics()) and the observer. The math an engine runs is the shared one
/// in train/: the reduction plan, computeWorkerPart() and the update rules.
///
/// Threading: a trainer is driven by one thread (the "driving thread"), which calls run() and may open
/// parallel teams from there. requestStop() may be called from any thread.
class Trainer
{
public:
    Trainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode);
    virtual ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    Mode mode() const { return m_mode; }
    /// "threads", "sim", "mpi".
    virtual const char* engineName() const = 0;

    /// Trains until the sample budget is used, the target is reached, `limits` are reached, the observer or
    /// requestStop() asks to stop, or the loss diverges. Returns true if there is more to do (call again).
    bool run(const RunLimits& limits, TrainingObserver& observer);

    /// Changes workers, batch, accum, chunk, learning rate, momentum, stragglers and jitter from the next
    /// update on, and the modes' own knobs: ssp's bound and backup's B from the next push or update, local-sgd's
    /// H from the next round, dc-asgd's lambda from the next push (threads and sim; an MPI job is never
    /// reconfigured). The data order, parameters and counters carry on; the metrics start a new segment. The
    /// caller checks the values first (validateSettings in run/SettingsCheck.h); this only guards its own
    /// preconditions (SgdError).
    void reconfigure(const TrainerSettings& settings);
    const TrainerSettings& settings() const { return m_settings; }

    /// After the last run() of a mode: engines whose workers are elsewhere release them and report what was
    /// still in flight (MPI). Nothing to do for the others.
    virtual void endOfRun(TrainingObserver& observer) { (void)observer; }
    /// After a RunFailure (a peer died, hung or failed) or running out of memory: reports every update counted so
    /// far and the spans known for it, without another message between processes, so that the figures and the
    /// recorded curve agree with updates(). Engines that report as they go (threads, sim) have left at most the
    /// update whose counting or recording ran out of memory (finished here, with the memory the run held back
    /// freed); MPI's also hand over the rest of every closed window.
    virtual void reportUntilFailure(TrainingObserver& observer);

    /// Thread-safe: the run stops at the next update (sync) or push boundary (async); a straggler's sleep
    /// is cut short.
    void requestStop() { m_stopFlag.store(true, std::memory_order_relaxed); }

    bool finished() const;
    bool diverged() const { return m_diverged; }
    std::int64_t divergedAt() const { return m_divergedAt; }
    bool stopped() const { return m_stopped; }
    std::int64_t updates() const { return m_updates; }
    std::int64_t samples() const { return m_samples; }
    double seconds() const { return m_seconds; }
    const ParamVector& parameters() const { return m_params; }
    const RunMetrics& metrics() const { return m_metrics; }
    /// The parameters and the figures, moved out at the run's end (the trainer is done with): a run that ran out of
    /// memory has none to copy them with.
    ParamVector releaseParameters() { return std::move(m_params); }
    RunMetrics releaseMetrics() { return std::move(m_metrics); }
    const TargetReached& target() const { return m_target; }
    const Problem& problem() const { return *m_problem; }

    /// Loss and accuracy of the current parameters on `data`, the same whatever the worker count.
    EvalSums evaluate(const Dataset& data);
    /// Evaluates on the training set (and the test set, if any), reports it and checks the target.
    EvaluationRecord evaluateAndReport(TrainingObserver& observer);
    /// The evaluation of the current parameters: the latest one if no update came after it, else a new
    /// one (reported).
    EvaluationRecord currentEvaluation(TrainingObserver& observer);
    /// The same, unless a stop request (a signal) cancels it on the way: then nothing is reported or kept.
    std::optional<EvaluationRecord> currentEvaluationUnlessStopped(TrainingObserver& observer);
    /// The latest evaluation reported (of the initial parameters at least, once run() began); whether there is one.
    const EvaluationRecord& lastEvaluation() const { return m_lastEvaluation; }
    bool evaluated() const { return m_evaluated; }

protected:
    /// Does one unit of work (one update or one time slice of pushes); implemented by each engine and mode.
    virtual void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) = 0;
    /// Called by reconfigure() after the settings changed.
    virtual void settingsChanged() { }

    /// The event stream: every engine reports its workers' spans per window and each update through these.
    void reportWorkerTime(const WorkWindow& window, std::span<const Span> spans, TrainingObserver& observer);
    /// Counts the update in the figures and hands it to the observer. When either runs out of memory, the update is
    /// kept, with how far it got, and reportUntilFailure finishes it: counted once, recorded once.
    UpdateFigures reportUpdate(const UpdateEvent& update, TrainingObserver& observer);
    /// Reports what a window cutter has ready (engines whose workers report late, MPI), in order; with
    /// `everything`, also what is still open (at the end of a run). After running out of memory, reporting again
    /// goes on where the last one stopped (each window remembers what of it was reported).
    void reportCut(WindowCutter& cutter, TrainingObserver& observer, bool everything);

    /// For engines that evaluate inside their own simulation, at the exact point a whole-set evaluation is
    /// due, without stopping the workers: the evaluation of the current parameters as of (updates, samples,
    /// seconds), with the target checked; report it later, in order, with reportEvaluation(). Advances the
    /// next evaluation point, so run() does not evaluate there again.
    bool evaluationDue(std::int64_t samplesAfter) const { return samplesAfter >= m_nextEvalSamples && !m_diverged; }
    EvaluationRecord evaluateAt(std::int64_t updates, std::int64_t samples, double seconds);
    void reportEvaluation(const EvaluationRecord& record, TrainingObserver& observer);

    /// Whether the run should stop now (requestStop(), or a cancellation request from a signal).
    bool stopRequestedNow() const;
    /// Creates the worker's workspace if needed (driving thread only, outside parallel regions).
    NetworkWorkspace& workspace(int worker);
    /// The worker's existing workspace; safe inside parallel regions (never allocates).
    NetworkWorkspace& workspaceAt(int worker) { return *m_workspaces[static_cast<std::size_t>(worker)]; }
    int chunkSizeFor(int batch) const;
    /// Sync-like updates of `batch` samples to make now, at most `cap`: no further than `limits`, the sample budget
    /// and the next whole-set evaluation allow (at least one).
    std::int64_t updatesWithinLimits(const RunLimits& limits, std::int64_t cap, int batch) const;
    /// Pushes one by one (async, ssp, dc-asgd) to apply now, at most `cap`: no further than `limits` allow (at least
    /// one). An engine that pauses its workers for the whole-set evaluation also stops at it (stepsToReach).
    std::int64_t pushesWithinLimits(const RunLimits& limits, std::int64_t cap) const;
    /// The lambda of a push's delay compensation (DelayCompensation): dc-asgd's, 0 (none) for every other mode.
    double compensationLambda() const { return m_mode == Mode::DcAsgd ? m_settings.dcLambda : 0.0; }
    /// Samples per pass (passSamplesFor the model).
    int passSamples() const { return m_passSamples; }
    void markDiverged(std::int64_t atUpdate);
    /// The event of the sync update that just ended at `seconds` with this batch loss (versions: the update's
    /// index). A finite loss counts the update and its samples; a non-finite one was not applied and marks
    /// the run diverged. Every engine's sync reports its updates through this.
    UpdateEvent syncUpdateEvent(int batch, double batchLoss, double seconds);
    /// Local SGD: the steps of the round that starts now (localRoundSteps: H, or what the sample budget has left).
    int nextLocalRoundSteps() const;
    /// Local SGD: the event of the round of `steps` local steps that just ended at `seconds`, as syncUpdateEvent's of
    /// steps x batch samples with the round's loss (RoundLoss::mean), and, if it was applied (averaged), the models'
    /// mean distance from their average before it (`spread`). Every engine's local SGD reports its rounds through this.
    UpdateEvent localRoundEvent(int steps, const RoundLoss& loss, double spread, double seconds);
    /// Completes the event of a push of an async-like mode (async, ssp, dc-asgd) whose own figures it holds
    /// (worker, versions, samples, loss, whether it was applied, ...) with the mode, its index and the samples seen,
    /// and counts it: an applied push is an update and its samples; one not applied (its loss was not finite)
    /// marks the run diverged. Every engine's async-like modes report their pushes, in apply order, through this.
    void countPush(UpdateEvent& push);

    std::shared_ptr<const Problem> m_problem;
    TrainerSettings m_settings;
    SampleView<float> m_view;
    DataOrder m_order;
    ParamVector m_params;
    StragglerModel m_stragglers {m_settings};
    std::int64_t m_updates = 0;
    std::int64_t m_samples = 0;
    double m_seconds = 0.0;
    std::int64_t m_nextEvalSamples = 0;
    std::int64_t m_runStartUpdates = 0; // m_updates when the current run() call began
    std::atomic<bool> m_stopFlag {false};

private:
    void maybeEvaluate(TrainingObserver& observer);
    bool stopWanted(TrainingObserver& observer);

    Mode m_mode;
    RunMetrics m_metrics;
    Evaluator m_evaluator;
    TargetReached m_target;
    EvaluationRecord m_lastEvaluation;
    bool m_evaluated = false;
    bool m_evaluationCancellable = false; // while set, evaluate() gives up on a cancellation request
    bool m_diverged = false;
    std::int64_t m_divergedAt = -1;
    bool m_stopped = false;
    // The update reportUpdate was handling when it ran out of memory (std::bad_alloc), for reportUntilFailure: its
    // figures once they were counted (RunMetrics::addUpdate changes nothing when it throws).
    struct Unreported
    {
        UpdateEvent update;
        std::optional<UpdateFigures> figures;
    };
    std::optional<Unreported> m_unreported;
    std::vector<std::unique_ptr<NetworkWorkspace>> m_workspaces;
    int m_workspaceCapacity = 0;
    int m_passSamples = 0;
};

} // namespace sgdscope
