#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/sim/SimCost.h"
#include "core/engines/sim/SimWorld.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

namespace sgdscope {

/// Asynchronous SGD on a simulated cluster, in virtual time (SimGrid): a parameter server (an actor on the
/// host after the workers') and P workers (actors on hosts 0..P-1). A worker downloads the parameters with
/// their version, computes the gradient of its slice (its floating-point work at its host's speed, times its
/// straggler factor), uploads it, and waits for the server; the server applies pushes one at a time in the
/// order they arrive (each apply takes modelled time on its host, so it becomes the bottleneck at large P,
/// as a real one does) and sends the pusher the new parameters. Messages have the parameters' real size and
/// share the links they cross (all of them the server's).
///
/// The math is executed for real in virtual-time order: a worker's gradient is computed on the snapshot the
/// server sent it (gradients of several workers in flight are independent, so they are computed in parallel
/// batches on this machine's cores, whenever the server needs one that is not ready); the server applies it
/// with the worker's own momentum, as the threads engine does. Staleness = updates applied between the
/// snapshot and the apply: it emerges from the simulated timing. With one worker the parameters are bit for
/// bit those of the threads engine's async run.
///
/// Measured per worker, in virtual seconds: waiting for the server (WaitRead), receiving the parameters
/// (WaitNetwork), compute, straggler delay, sending the gradient (Communicate), and waiting at the end of a
/// slice (WaitSlice). Slices are deterministic: a number of pushes that depends on the settings only.
class SimAsyncTrainer final : public Trainer
{
public:
    /// `mode`: Async; DcAsgd (the server compensates each push for its delay: DelayCompensation); Ssp (the server
    /// holds a worker's next push back while its clock, its pushes applied, is more than the bound ahead of the
    /// slowest worker's: Ho et al. 2013's stale synchronous parallel).
    SimAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform,
        int hosts, Mode mode = Mode::Async);
    ~SimAsyncTrainer() override;
    const char* engineName() const override { return "sim"; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    struct WorkerState;
    struct Slice;
    void prepareWorkers();
    /// Gives worker w its next push (its samples claimed from the budget, a snapshot of the parameters), or
    /// returns false when the slice or the run has none left for it.
    bool assignPush(Slice& slice, int worker);
    /// Whether the slice or the run has a push left for the worker.
    bool pushAvailable(const Slice& slice, int worker) const;
    /// The server answers the worker: its next push (returns true), or none (it leaves the slice); ssp: or holds it
    /// back until the slowest worker is within the bound (`releasedBy`: the worker whose push let it go, -1: none).
    bool answer(Slice& slice, int worker, int releasedBy);
    /// ssp: answers the held workers that the bound now lets start.
    void releaseHeld(Slice& slice, int by);
    /// Computes every assigned gradient not computed yet, in parallel.
    void computePending(Slice& slice);
    void simulate(Slice& slice);

    SimPlatformChoice m_platform;
    DelayCompensation m_compensation; // dc-asgd: the server's
    SimCost m_cost;
    std::vector<std::unique_ptr<WorkerState>> m_workers;
    std::int64_t m_claimedSamples = 0;
    int m_mathThreads = 1;
    /// Per thread of the math: the reduction buffers of the gradient it computes (the finished gradient is swapped
    /// into the worker's own, so a worker keeps one gradient, not its whole reduction).
    std::vector<std::vector<ParamVector>> m_scratch;
    std::unique_ptr<Slice> m_kept; // the last slice's pushes and spans vectors, kept for their room
    std::vector<Span> m_reported; // the spans reported for a slice
};

} // namespace sgdscope
