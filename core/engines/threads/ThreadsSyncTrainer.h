#pragma once

#include "core/engines/Trainer.h"
#include "core/train/ChunkGradients.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

#include <atomic>
#include <chrono>
#include <exception>

namespace sgdscope {

/// Synchronous data-parallel SGD on OpenMP threads of this machine: every update, the global batch of B
/// samples is split over P workers, each computes the gradient of its chunks as K micro-batches in a row,
/// the gradients are combined, weighted by sample count, and one update is applied - exactly large-batch
/// gradient descent, parallelised (as TensorFlow's SyncReplicasOptimizer, PyTorch DDP or Horovod).
///
/// Exactness: the batch gradient is (1/B) x a fixed reduction tree over fixed chunks of the batch
/// (ReductionPlan); P and K only decide who computes which chunk and when. The parameters after a run are
/// therefore bitwise identical for every P and K (same data, seed and chunk size), and from run to run.
///
/// Measured, per worker and update: waiting to be started with the others, compute, straggler delay,
/// waiting at the barrier for the slowest worker, its share of the combine and apply, and waiting for the
/// others to finish theirs (all wait kinds: WaitBarrier). Each wait names whom it waited for: at the barrier,
/// the last worker to arrive; at the end, the last to finish its share of the apply.
///
/// Mode::Backup (Chen, Pan, Monga, Bengio, Jozefowicz 2016, "Revisiting Distributed Synchronous SGD"): each
/// update applies the gradients of the first P - B workers to finish (their compute and straggler delay) and
/// drops the others: a late worker's delay is cut short as soon as P - B have arrived, and its gradient is
/// left out. The applied gradients are added in the same fixed chunk tree, the dropped workers' subtrees
/// taken as zero, and the sum is scaled to their mean (B / applied samples times the tree's mean): with
/// nothing dropped it is sync's update bit for bit. Workers without samples (more workers than chunks) take
/// no part in the count.
class ThreadsSyncTrainer final : public Trainer
{
public:
    /// `mode`: Sync or Backup.
    ThreadsSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode = Mode::Sync);
    ~ThreadsSyncTrainer() override;
    const char* engineName() const override { return "threads"; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    using Clock = std::chrono::steady_clock;
    struct alignas(64) WorkerSlot
    {
        // Each span is timed by its own pair of clock readings (not the neighbour's end), so that time the
        // spans miss shows up as unaccounted instead of being absorbed.
        Clock::time_point start, computed, delayStart, ready, waitStart, released, applyStart, applied, joinStart;
        int samples = 0;
        bool dropped = false; // backup: its gradient came too late and is left out
        std::exception_ptr failure;
    };

    void preparePlan();
    /// Computes `worker`'s chunks of the batch, its compute span starting at `start` (a team of one passes
    /// the update's start: one clock read fewer on the tiny models, where each costs a few percent).
    void computePart(int worker, const std::uint32_t* indices, Clock::time_point start);
    void combineAndApply(int worker, int team);
    /// How many gradients this update applies (backup: the first to arrive, backupGradientsKept; sync: all).
    int gradientsKept() const;

    BatchCursor m_cursor;
    SyncReduction m_reduction;
    std::vector<WorkerSlot> m_slots;
    std::vector<Span> m_spans;
    ParamVector m_velocity;
    // Backup, per update: arrivals so far; set when enough have arrived (the late ones' delays end); the
    // worker whose arrival completed the update.
    std::atomic<int> m_arrivals {0};
    std::atomic<bool> m_dropLate {false};
    int m_completedBy = -1;
    std::vector<char> m_dropped; // per worker: its gradient is left out (each worker writes its own)
};

} // namespace sgdscope
