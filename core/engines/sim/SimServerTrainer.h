#pragma once

#include "core/engines/sim/SimSyncLikeTrainer.h"

namespace sgdscope {

/// The team-wide modes on a parameter server (--topology ps), on a simulated cluster in virtual time: sync, local
/// SGD (an update is a round of H local steps; the models go to the server and the average comes back), and sync
/// with backup workers (Chen, Pan, Monga, Bengio, Jozefowicz 2016, "Revisiting Distributed Synchronous SGD"; run as
/// TensorFlow's SyncReplicasOptimizer runs it). A parameter server (an actor on the host after the workers') and P
/// workers (actors on hosts 0..P-1); sync is backup with B = 0, on the same wires and the same schedule.
///
/// Every update, each worker computes its part of the batch on that update's parameters (its floating-point
/// work at its host's speed, then its straggler delay: the same work again factor - 1 times) and uploads its
/// gradient. The server takes the first P - B gradients of the update to arrive, in the order they arrive;
/// the work still running for that update is cancelled there and then (those workers are dropped, as is a
/// gradient that was on the wire), the server applies the update and answers, and every worker downloads the
/// new parameters. A worker that was behind skips to the newest parameters. Workers without samples (more
/// workers than chunks) take no part in the count.
///
/// The math is the threads engine's backup update, executed for real once the slice's timing is simulated (the
/// timing does not depend on the values): each update's kept workers' parts on its parameters, the fixed chunk
/// tree with the dropped workers' subtrees as zero, scaled to the kept samples' mean. With B = 0 nothing is
/// dropped and it is sync's update bit for bit.
///
/// Measured per worker, in virtual seconds: compute, straggler delay (both cut short when it is dropped),
/// uploading (Communicate), waiting for the update to get its gradients (WaitBarrier, naming the worker whose
/// arrival completed it) and for the server's apply (WaitBarrier), downloading (WaitNetwork). Each update is a
/// window from the server's previous apply to this one's (the slice's last ends when every worker has the
/// parameters).
class SimServerTrainer final : public SimSyncLikeTrainer
{
public:
    /// `mode`: Sync, Backup or LocalSgd.
    SimServerTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, SimPlatformChoice platform,
        int hosts, Mode mode);
    ~SimServerTrainer() override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;

private:
    struct Slice;
    void simulate(Slice& slice);
};

} // namespace sgdscope
