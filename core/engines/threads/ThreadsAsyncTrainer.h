#pragma once

#include "core/common/FairLock.h"
#include "core/engines/Trainer.h"
#include "core/train/ReductionPlan.h"
#include "core/train/SspGate.h"
#include "core/train/UpdateRule.h"

#include <chrono>
#include <exception>
#include <mutex>

namespace sgdscope {

/// Asynchronous SGD on OpenMP threads of this machine: each of P workers reads a snapshot of the shared
/// parameters together with their version, computes the gradient of its slice (K micro-batches,
/// sample-weighted as in sync) and applies it as soon as it is done, while others may have updated the
/// parameters in between. Nobody waits for anybody's gradient; gradients are stale.
///
///  - AsyncApply::Lock (default): reads and applies are short critical sections, as a parameter server
///    applies pushes (Dean et al. 2012, "Large Scale Distributed Deep Networks", Downpour SGD). Staleness =
///    updates applied between the read and the apply.
///  - AsyncApply::LockFree: element by element without a lock (Niu et al. 2011, "HOGWILD!"), with relaxed
///    atomic loads and stores. Staleness = other pushes whose writes completed between the start of the
///    read and the completion of this push's write; pushes are in the order their writes completed.
///  - Mode::Ssp (stale synchronous parallel: Ho, Cipar, Cui et al. 2013, "More Effective Distributed ML via a
///    Stale Synchronous Parallel Parameter Server"): a worker whose clock (pushes applied) is more than the bound S
///    ahead of the slowest worker's waits (WaitBarrier, named after the slowest) before its next push. The rule is
///    every engine's SspGate, which the workers share under a lock. S = 0 waits like sync; a large S is async.
///  - Mode::DcAsgd compensates each push's gradient for its delay (DelayCompensation) under the lock, against
///    the parameters it is applied to, before the worker's momentum; with lambda 0 the push is async's.
///  - AsyncLearningRate::Staleness divides a push's learning rate by max(1, staleness) (Zhang et al. 2016);
///    lock-free, by the staleness known when its write begins.
///
/// Data: worker i's n-th push uses slice i of global batch n (DataOrder), so with equally fast workers async
/// sees the same samples as sync. The sample budget is shared: the run ends when the pushes begun have used
/// exactly the same number of samples as sync would (the last push is cut short if needed); a fast worker
/// keeps pushing while a slow one computes, and so goes further in the data order. Each worker keeps its
/// own momentum buffer (as PyTorch's Hogwild example does with one optimizer per process); momentum work
/// is apply time.
///
/// Time slices: run() trains in slices (an OpenMP region each, by default 0.25 s of the mode's clock, less
/// if the limits ask, ending at the next whole-training-set evaluation); pushes are reported after each
/// slice, in apply order. When a slice's time is up, workers start no new push unless a push begun before
/// the deadline is still running, so fast workers keep working while a straggler finishes. Measured per
/// worker: waiting for the lock, copying the snapshot (communication), compute, straggler delay, apply, and
/// waiting at the slice's start and end (WaitSlice). A lock wait names the worker that held the lock when it
/// began (the one ahead in the queue may be another: the holder is who made it wait first).
class ThreadsAsyncTrainer final : public Trainer
{
public:
    /// `mode`: Async, or DcAsgd (each push's gradient compensated under the lock: DelayCompensation).
    ThreadsAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode = Mode::Async);
    ~ThreadsAsyncTrainer() override;
    const char* engineName() const override { return "threads"; }

    /// Longest slice, in seconds of the mode's clock (default 0.25).
    void setSliceSeconds(double seconds) { m_sliceSeconds = seconds; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    using Clock = std::chrono::steady_clock;
    struct PushRecord
    {
        UpdateEvent event; // its own figures (Trainer::countPush completes them)
        Clock::time_point applied; // its write completed
    };
    struct WorkerState;

    void prepareWorkers();
    void workerLoop(int worker, Clock::time_point deadline);
    void push(WorkerState& state, int worker, int count);
    /// ssp: waits until the worker is at most the bound ahead of the slowest worker (its clock: pushes applied);
    /// false if the slice or the run ends meanwhile.
    bool waitWithinBound(int worker, WorkerState& state, Clock::time_point deadline);
    /// ssp: worker w's push was applied (`advance`) or it leaves the slice; the waiting workers look again.
    void clockMoved(int worker, bool advance);

    std::vector<std::unique_ptr<WorkerState>> m_workers;
    std::atomic<std::int64_t> m_claimedSamples {0}; // samples of pushes begun (the budget is shared)
    std::atomic<std::int64_t> m_pushesLeft {0}; // of this call's RunLimits::maxUpdates
    DelayCompensation m_compensation; // dc-asgd (under m_lock)
    std::atomic<int> m_lockHolder {-1}; // the worker that took m_lock last (whom a lock wait names)
    FairLock m_lock; // served in the order asked, as a parameter server serves its queue
    std::atomic<std::int64_t> m_version {0}; // updates applied (lock-free: writes completed)
    std::atomic<std::int64_t> m_appliedSamples {0}; // samples of the pushes applied (the learning rate's schedule)
    std::atomic<int> m_preDeadlineActive {0};
    std::atomic<bool> m_divergedFlag {false};
    std::mutex m_sspLock; // ssp: serializes the workers' calls to the gate
    SspGate m_ssp; // ssp: the clocks of the workers taking part in the slice (under m_sspLock)
    std::atomic<std::int64_t> m_clockEvents {0}; // ssp: clocks moved or workers left (waited on)
    double m_sliceSeconds = 0.25;
};

} // namespace sgdscope
