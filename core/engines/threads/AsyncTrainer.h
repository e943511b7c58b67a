#pragma once

#include "core/train/ReductionPlan.h"
#include "core/train/Trainer.h"

#include <mutex>

namespace sgdscope {

/// Asynchronous SGD: each of P OpenMP workers reads a snapshot of the shared parameters together with
/// their version number, computes the gradient of its slice (K micro-batches, sample-weighted as in sync)
/// and applies it as soon as it is done, while others may have updated the parameters in between. Nobody
/// waits; gradients are stale.
///
///  - AsyncApply::Lock (default): reads and applies are short critical sections, as a parameter server
///    applies pushes (Dean et al. 2012, "Large Scale Distributed Deep Networks", Downpour SGD).
///  - AsyncApply::LockFree: element by element without a lock (Niu et al. 2011, "HOGWILD!"), with relaxed
///    atomic loads and stores, so updates may interleave but there is no data race.
///  - AsyncLearningRate::Staleness divides a push's learning rate by max(1, staleness) (Zhang et al. 2016,
///    "Staleness-aware Async-SGD for Distributed Deep Learning").
///
/// Data: worker i's n-th push uses slice i of global batch n (DataOrder), so with equally fast workers async
/// sees the same samples as sync. The sample budget is shared: the run ends when the pushes begun have used
/// exactly the same number of samples as sync would (the last push is cut short if needed); a fast worker keeps pushing
/// while a slow one computes, and so goes further in the data order. Each worker keeps its own momentum buffer (as
/// PyTorch's Hogwild example does with one optimizer per process).
///
/// Staleness of a push = version at its apply - version at its read (updates applied in between).
///
/// Time slices: a call to run() trains in slices (an OpenMP region each, by default 0.25 s of the mode's
/// clock, less if the limits ask, and ending at the next whole-training-set evaluation); pushes are
/// reported to the observer after each slice, in apply order.
/// When a slice's time is up, workers finish their push and start no new one unless a push begun before
/// the deadline is still running, so fast workers keep working while a straggler finishes. Waiting at
/// the end of a slice counts as idle time.
class AsyncTrainer final : public Trainer
{
public:
    AsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
    ~AsyncTrainer() override;

    Mode mode() const override { return Mode::Async; }

    /// Longest slice, in seconds of the mode's clock (default 0.25).
    void setSliceSeconds(double seconds) { m_sliceSeconds = seconds; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    struct PushRecord
    {
        std::int64_t version = 0; // its place in apply order (0-based)
        std::int64_t staleness = 0;
        double loss = 0.0; // slice loss at the snapshot
        int samples = 0;
        int worker = 0;
        Clock::time_point readStart, computeStart, computeEnd, ready, applyStart, applyEnd;
        bool applied = false;
    };
    struct WorkerState;

    void prepareWorkers();
    void workerLoop(int worker, Clock::time_point deadline);
    void push(WorkerState& state, int worker, int count);

    std::vector<std::unique_ptr<WorkerState>> m_workers;
    std::atomic<std::int64_t> m_claimedSamples {0}; // samples of pushes begun (the budget is shared)
    std::atomic<std::int64_t> m_pushesLeft {0}; // of this call's RunLimits::maxUpdates
    std::mutex m_lock;
    std::atomic<std::int64_t> m_version {0};
    std::atomic<int> m_preDeadlineActive {0};
    std::atomic<bool> m_divergedFlag {false};
    std::atomic<std::int64_t> m_divergedVersion {-1};
    double m_sliceSeconds = 0.25;
};

} // namespace sgdscope
