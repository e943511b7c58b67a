#pragma once

#include "core/engines/mpi/MpiAllReduce.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/MpiRootTrainer.h"
#include "core/engines/mpi/MpiWorkerPart.h"
#include "core/train/ChunkGradients.h"
#include "core/train/LocalSgd.h"
#include "core/train/ReductionPlan.h"

namespace sgdscope {

/// Synchronous data-parallel SGD across MPI processes: rank r is worker r (but local-sgd on --topology ps, below).
/// Every update, rank 0 broadcasts
/// the parameters to every rank (down a binomial tree of messages, so rank 0 does not send them N - 1 times); each
/// computes its chunks of the batch (computeWorkerPart, the same reduction plan as the other engines, from its own copy
/// of the data in the same order) and sends rank 0 the roots of its part of the fixed chunk tree; rank 0 adds them up
/// in the tree's fixed order (not MPI_Allreduce, whose order of additions depends on the process count and message
/// sizes) and applies the update. So the parameters are bit for bit those of the threads engine, for any number of
/// processes.
///
/// Measured per rank with its own clock, converted to rank 0's (the offsets are estimated at start): waiting
/// for rank 0 to finish its own part (WaitBarrier), for its gradient to reach rank 0 (WaitNetwork), for the
/// parameters while rank 0 waited for the slowest
/// (WaitBarrier), while rank 0 combined, applied and
/// evaluated (WaitRead: the others wait for rank 0 as for a server) and while they travel (WaitNetwork),
/// compute, straggler delay, sending its gradient (Communicate); rank 0 also adds and applies (Apply) and
/// broadcasts the parameters (Communicate, until the others have taken them). Ranks
/// send their spans with their next message, so rank 0 reports an update once every rank's spans of it
/// arrived.
///
/// Local SGD (Mode::LocalSgd) goes the same way, round by round: rank 0 broadcasts the averaged model and how
/// many local steps the round takes; every rank takes them on its own model (LocalSgdModels: its slice of each
/// of the round's batches, its own momentum) and sends rank 0 its model, which rank 0 averages in worker order.
/// The same bits as the threads engine's local-sgd for any number of processes. With --topology ps rank 0 is a server
/// (it averages and computes nothing; ranks 1..N-1 are workers 0..N-2), the parameters go from it straight to every
/// worker, and the models back: backup's wires, and the threads engine's bits at N - 1 workers.
///
/// Sync on the all-reduce (--topology allreduce, MpiAllReduce): rank 0 sends only "go" (and the learning rate) down
/// the tree; every rank computes its part, the ranks reduce-scatter the roots, each adds up and applies its segment,
/// and they all-gather the parameters. Rank 0 changes its parameters only once it has every segment, so an update
/// that failed half way leaves them as the last counted update left them. The same bits as the tree's.
///
/// This object is rank 0's; the other ranks run serveMpiSync().
class MpiSyncTrainer final : public MpiRootTrainer
{
public:
    /// `mode`: Sync or LocalSgd.
    MpiSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode = Mode::Sync);
    ~MpiSyncTrainer() override;
    void endOfRun(TrainingObserver& observer) override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    void preparePlan();
    /// Broadcasts the parameters with the times of the last update's gradients: to go on (`go`) or to stop.
    void broadcastParameters(bool go);
    /// Rank 0's own part of the batch (worker 0's chunks) into m_reduction, timed into `mine`.
    void computeOwnPart(RankSpans& mine);
    /// One sync update on the all-reduce.
    void trainAllReduced(TrainingObserver& observer);
    /// The all-reduce's "go" (with the learning rate of the update, and the parameters when the ranks may not have
    /// them) or "stop", down the tree.
    void sendGo(bool go, float lr);
    /// Waits until rank 0's children have taken what it last sent them (m_go).
    void completeBroadcast();
    bool allReduced() const { return mode() == Mode::Sync && m_settings.topology == Topology::AllReduce; }
    /// Local-sgd on --topology ps: rank 0 is the server (averages, computes nothing), rank r worker r - 1.
    bool served() const { return mode() == Mode::LocalSgd && m_settings.topology == Topology::ParameterServer; }

    BatchCursor m_cursor;
    SyncReduction m_reduction;
    ParamVector m_velocity;
    MpiContext::PostedReceives m_gradients; // one receive per other rank, posted for every update
    MpiMessage m_go; // the parameters broadcast (its buffer kept from update to update)
    std::vector<MpiContext::PendingSend> m_broadcast; // of m_go, to rank 0's children in the tree
    std::int64_t m_computedSamples = 0; // by rank 0 itself
    double m_takingGradientsAt = 0.0; // when rank 0 began to take the last update's gradients (its clock)
    double m_allGradientsAt = 0.0; // when rank 0 had every gradient of the last update (its clock)
    std::vector<double> m_arrivals; // when each rank's gradient of the last update arrived (rank 0's: 0)
    // local-sgd: every worker's model (rank 0 computes worker 0's and averages them all), the local steps taken
    // so far by the run and this round's.
    LocalSgdModels m_local;
    std::int64_t m_globalStep = 0;
    int m_roundSteps = 1;
    // The all-reduce: the exchange, the next parameters and rank 0's segment of the next velocity (staged until every
    // segment is in; m_velocity holds only rank 0's segment there, the other ranks keep theirs), and whether the other
    // ranks hold rank 0's parameters (after an all-gather; else "go" carries them).
    std::unique_ptr<MpiAllReduce> m_allReduce;
    ParamVector m_next;
    ParamVector m_nextVelocity;
    bool m_ranksHaveParameters = false;
};

/// What ranks other than 0 do in a sync or local-sgd run (on the tree; sync on the all-reduce; local-sgd as workers of
/// rank 0's server on --topology ps): serve rank 0's updates until it says stop.
void serveMpiSync(std::shared_ptr<const Problem> problem, const TrainerSettings& settings, Mode mode);

} // namespace sgdscope
