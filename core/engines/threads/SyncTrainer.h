#pragma once

#include "core/train/ReductionPlan.h"
#include "core/train/Trainer.h"

namespace sgdscope {

/// Synchronous data-parallel SGD: every update, the global batch of B samples is split over P OpenMP
/// workers, each computes the gradient of its slice as K micro-batches in a row, the gradients are
/// combined, weighted by sample count, and one update is applied - exactly large-batch gradient descent,
/// parallelised (as TensorFlow's SyncReplicasOptimizer, PyTorch DDP or Horovod's allreduce).
///
/// Exactness: the batch gradient is (1/B) x a fixed reduction tree over fixed chunks of the batch
/// (ReductionPlan); P and K only decide who computes which chunk and when. The parameters after a run are
/// therefore bitwise identical for every P and K (same data, seed and chunk size), and from run to run.
///
/// Update rule (as torch.optim.SGD): v = momentum * v + g (v starts at 0), w = w - lr * v.
///
/// Timing of worker w in one update: busy from its start to its gradient being ready (including injected
/// straggler delay), idle from then until the slowest worker is ready (and before it was started), then
/// combining and applying with everybody. busy + idle + apply = the update's wall time, for every worker.
class SyncTrainer final : public Trainer
{
public:
    SyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
    ~SyncTrainer() override;

    Mode mode() const override { return Mode::Sync; }

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    struct alignas(64) WorkerSlot
    {
        Clock::time_point start;
        Clock::time_point computed;
        Clock::time_point ready;
        std::exception_ptr failure;
    };

    void preparePlan();
    void computePart(int worker, const std::uint32_t* indices);
    void combineAndApply(int worker, int team);

    BatchCursor m_cursor;
    ReductionPlan m_plan;
    ChunkLayout m_chunks;
    int m_planWorkers = 0;
    int m_planAccum = 0;
    std::vector<ParamVector> m_buffers;
    std::vector<double> m_chunkLoss;
    std::vector<WorkerSlot> m_slots;
    std::vector<WorkerSpan> m_spans;
    ParamVector m_velocity;
};

} // namespace sgdscope
