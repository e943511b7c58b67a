#pragma once

#include <cstdint>
#include <span>

namespace sgdscope {

enum class Mode
{
    Sync,
    Async
};
inline const char* modeName(Mode m)
{
    return m == Mode::Sync ? "sync" : "async";
}

/// One update (sync) or one push (async), as the observer sees it.
struct UpdateRecord
{
    Mode mode = Mode::Sync;
    std::int64_t index = 0; // 0-based: the n-th update applied in this mode
    std::int64_t samples = 0; // samples seen by this mode after it
    double seconds = 0.0; // the mode's clock after it (advances only while the mode trains)
    double batchLoss = 0.0; // loss of the batch (sync) or slice (async) at the parameters it was computed on
    std::int64_t staleness = 0; // updates applied between the gradient's read and its apply (sync: 0)
    int worker = -1; // async: who pushed it; sync: -1 (everybody)
    int batch = 0; // samples in this update
};

/// What one worker did during one update (sync) or push (async), on the mode's clock in seconds.
/// busy = [computeStart, readyAt) (computeEnd..readyAt is injected straggler delay); the worker is idle
/// from readyAt to applyStart (sync: waiting for the slowest; async: waiting for the lock) and applies (or
/// combines) from applyStart to applyEnd.
struct WorkerSpan
{
    int worker = 0;
    double computeStart = 0.0;
    double computeEnd = 0.0;
    double readyAt = 0.0;
    double applyStart = 0.0;
    double applyEnd = 0.0;
    double idleBefore = 0.0; // idle before computeStart (sync: waiting to be started; async: reading)
};

/// The loss on the whole training set, every so often (outside the mode's clock).
struct EvaluationRecord
{
    Mode mode = Mode::Sync;
    std::int64_t index = 0; // updates applied so far
    std::int64_t samples = 0;
    double seconds = 0.0;
    double trainLoss = 0.0;
    double trainAccuracy = -1.0; // classification only, else < 0
};

/// How core reports progress (after mlpack/ensmallen's callbacks): every hook is called on the thread that
/// drives the trainer, between updates, never from inside an OpenMP region. Hooks must be quick (append to
/// a buffer); they must not call back into the trainer.
///
/// Order of calls in one run: onUpdate for every update or push, in the order they were applied (async
/// pushes are delivered in batches after each time slice, still in apply order); onEvaluation every so
/// often and once at the end. stopRequested() is polled between updates (sync) or time slices (async, and
/// by the workers between pushes through the trainer's own flag): once it returns true the run stops in
/// order and keeps what it has.
class TrainingObserver
{
public:
    virtual ~TrainingObserver() = default;
    virtual void onUpdate(const UpdateRecord& update, std::span<const WorkerSpan> workers)
    {
        (void)update;
        (void)workers;
    }
    virtual void onEvaluation(const EvaluationRecord& evaluation) { (void)evaluation; }
    virtual bool stopRequested() { return false; }
};

} // namespace sgdscope
