#pragma once

#include "core/engines/Trainer.h"
#include "core/train/ChunkGradients.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

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
/// others to finish theirs (all wait kinds: WaitBarrier).
class ThreadsSyncTrainer final : public Trainer
{
public:
    ThreadsSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
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
        std::exception_ptr failure;
    };

    void preparePlan();
    /// Computes `worker`'s chunks of the batch, its compute span starting at `start` (a team of one passes
    /// the update's start: one clock read fewer on the tiny models, where each costs a few percent).
    void computePart(int worker, const std::uint32_t* indices, Clock::time_point start);
    void combineAndApply(int worker, int team);

    BatchCursor m_cursor;
    SyncReduction m_reduction;
    std::vector<WorkerSlot> m_slots;
    std::vector<Span> m_spans;
    ParamVector m_velocity;
};

} // namespace sgdscope
