#pragma once

#include "core/metrics/Events.h"

#include <span>

namespace sgdscope {

/// How core reports progress (after mlpack/ensmallen's callbacks). Every hook is called on the thread that
/// drives the trainer, between updates, never from inside an OpenMP region; hooks must be quick (append to
/// a buffer) and must not call back into the trainer.
///
/// Order of calls: onWorkerTime for a sync update or an async time slice (every member's spans in that
/// window), then onUpdate for each update or push applied in it, in apply order; onEvaluation every so
/// often and once at the end. stopRequested() is polled between updates (sync) or time slices (async); once
/// it returns true the run stops in order and keeps what it has. Trainer::requestStop() and a cancellation
/// request (a signal) stop it sooner: at the next push boundary, cutting a straggler's sleep short.
class TrainingObserver
{
public:
    virtual ~TrainingObserver() = default;
    virtual void onWorkerTime(const WorkWindow& window, std::span<const Span> spans)
    {
        (void)window;
        (void)spans;
    }
    virtual void onUpdate(const UpdateEvent& update, const UpdateFigures& figures)
    {
        (void)update;
        (void)figures;
    }
    virtual void onEvaluation(const EvaluationRecord& evaluation) { (void)evaluation; }
    virtual bool stopRequested() { return false; }
};

} // namespace sgdscope
