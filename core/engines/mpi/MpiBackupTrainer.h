#pragma once

#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/MpiRootTrainer.h"
#include "core/train/ChunkGradients.h"

#include <deque>
#include <memory>

namespace sgdscope {

/// Sync with backup workers across MPI processes (Chen et al. 2016), as the simulated cluster runs it: rank 0 is
/// a parameter server, ranks 1..N-1 are workers 0..N-2 (P = N - 1). Every update the server sends every worker
/// the parameters (without waiting for anyone to take them), takes the gradients of that update from the first
/// P - B workers to send one (B: --backup-workers), adds them in the fixed chunk tree with the others' subtrees
/// set to zero and the root scaled by batch / kept samples (SyncReduction::combineKept, as every engine), and
/// applies the update. So with B = 0 it is sync, bit for bit: it runs sync on --topology ps too (mode Sync, every
/// gradient kept).
///
/// A worker left out finds the next parameters waiting: if they come during its straggler delay, it stops the
/// delay there (its computing cannot be cut) and sends only a note with its spans; a gradient it sent too late is
/// dropped by the server. A worker takes the newest parameters it has been sent, skipping updates that finished
/// without it. Its n-th update uses its slice of global batch n, whichever updates it skipped.
///
/// Measured per worker with its own clock, converted to rank 0's: waiting for the update to be complete
/// (WaitBarrier, named after the worker whose gradient completed it), for the server to combine and apply
/// (WaitRead), for the parameters on the wire (WaitNetwork); compute, straggler delay, sending (Communicate).
///
/// This object is rank 0's; the other ranks run serveMpiBackup().
class MpiBackupTrainer final : public MpiRootTrainer
{
public:
    MpiBackupTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode = Mode::Backup);
    ~MpiBackupTrainer() override;
    void endOfRun(TrainingObserver& observer) override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    /// Sends every worker the parameters (`go`) or the end of the run, without waiting for it to take them.
    void sendParameters(bool go);
    /// Takes one message from a worker (a gradient, maybe of an update already applied, or a note); returns the
    /// worker if it was a gradient of update `update`, else -1.
    int takeMessage(std::int64_t update);
    /// Completes the sends the workers have taken.
    void pruneSends();

    int m_workers = 0;
    SyncReduction m_reduction;
    ParamVector m_velocity;
    MpiContext::PostedReceives m_messages; // one receive per worker
    std::vector<std::int64_t> m_received; // per worker: messages taken
    struct Outgoing
    {
        std::shared_ptr<const MpiMessage> bytes;
        MpiContext::PendingSend send;
    };
    std::vector<std::deque<Outgoing>> m_sends; // per worker, oldest first
    double m_completedAt = 0.0; // when the last update had its gradients (rank 0's clock)
    int m_completedBy = -1; // the worker whose gradient completed it
    std::vector<double> m_arrivals; // when each worker's gradient of it arrived (rank 0's clock; < 0: not taken)
};

/// What ranks other than 0 do in a backup run: compute updates for rank 0 until it says stop.
void serveMpiBackup(std::shared_ptr<const Problem> problem, const TrainerSettings& settings);

} // namespace sgdscope
