#pragma once

#include "core/engines/sim/SimSyncLikeTrainer.h"

namespace sgdscope {

/// Synchronous data-parallel SGD on a simulated cluster, in virtual time (SimGrid). The math is the threads
/// engine's, executed for real and in update order: every update, each worker's part of the batch
/// (computeWorkerPart, the same reduction plan), the fixed-tree combine and the update rule; so the
/// parameters are bit for bit those of the threads engine. The simulation decides only when things happen:
/// worker w is an actor on host w that computes its chunks (their floating-point work at the host's speed,
/// times its straggler factor), sends its gradient up a binomial tree (messages of the parameters' size over
/// the platform's links), the root applies the update and sends the parameters back down the tree
/// (--topology tree); or the workers all-reduce it (--topology allreduce: reduce-scatter, each worker's apply of its
/// segment, all-gather). The team-wide modes on a parameter server are SimServerTrainer's.
///
/// Measured per worker, in virtual seconds: compute, straggler delay, waiting for a peer's message before it
/// was sent (WaitBarrier: for the slowest worker, named: the last to finish its compute among the workers whose
/// gradients the message carries, or among all of them for the parameters) and while it travels (WaitNetwork), sending
/// (Communicate), adding children's gradients and applying (Apply). Each update is a window from the moment the
/// previous update's parameters reached the last worker to the moment this one's did.
///
/// Runs in slices of up to 1024 updates (fewer for many workers or large batches, and ending at the next
/// whole-set evaluation), a deterministic function of the settings, so results do not depend on wall time.
class SimSyncTrainer final : public SimSyncLikeTrainer
{
public:
    /// `mode`: Sync, or LocalSgd (an update is a round: every worker's H local steps on its own model, LocalSgdModels,
    /// one execution of their work times the mean of their straggler factors; then the models go up the tree and
    /// the average comes down, as sync's gradients and parameters do).
    SimSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform,
        int hosts, Mode mode = Mode::Sync);
    ~SimSyncTrainer() override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;

private:
    struct Slice;
    /// The slice's timing on a binomial tree: gradients up it (each parent adds its children's), the root applies,
    /// the parameters down it.
    void simulate(Slice& slice);
    /// The slice's timing on an all-reduce: a reduce-scatter (in step k = 1 .. P - 1 worker w sends its share of
    /// segment w + k, 1/P of the gradient, to worker w + k, which sums the P shares of its segment in the fixed
    /// tree's order), each worker applies its segment, then an all-gather (in step k it sends its segment of the
    /// parameters to worker w + k). Each worker sends 2 (P - 1) / P of the parameters, one message at a time.
    void simulateAllReduce(Slice& slice);
};

} // namespace sgdscope
