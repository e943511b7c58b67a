#pragma once

#include "core/engines/mpi/MpiRootTrainer.h"
#include "core/train/SspGate.h"
#include "core/train/UpdateRule.h"

namespace sgdscope {

/// Asynchronous SGD across MPI processes: rank 0 is a parameter server, ranks 1..N-1 are workers 0..N-2.
/// The server posts a receive for every worker and serves whichever gradient arrives first (two-sided
/// messages; one-sided RMA is not used, Open MPI 4.1 has open bugs in it): it applies the gradient with that
/// worker's own momentum (staleness from the versions: updates applied between the parameters it sent and
/// this apply) and sends the worker the new parameters with their version and the samples of its next push.
/// Worker w's n-th push uses slice w of global batch n (its own copy of the data, the same order), and the
/// sample budget is shared, as in the other engines; with one worker the parameters are bit for bit those of
/// the threads engine.
///
/// Measured per worker with its own clock, converted to rank 0's: waiting for the server before it sent the
/// parameters (WaitRead) and while they travel (WaitNetwork), compute, straggler delay, sending (Communicate),
/// and waiting at a slice's end (WaitSlice: the server pauses everyone for a whole-set evaluation).
///
/// The server runs the async-like modes as the simulated cluster's does: dc-asgd compensates each push for its
/// delay (DelayCompensation, against a copy of the parameters the worker was sent); ssp holds a worker's answer
/// back while it is too far ahead of the slowest (SspGate), and the answer says since when it was held and whose
/// push released it (the worker records that stretch as a wait for the slowest, WaitBarrier, naming it).
///
/// This object is rank 0's; the other ranks run serveMpiAsync().
class MpiAsyncTrainer final : public MpiRootTrainer
{
public:
    /// `mode`: Async, Ssp or DcAsgd.
    MpiAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode);
    ~MpiAsyncTrainer() override;
    void endOfRun(TrainingObserver& observer) override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;
    void closeOpenWindow() override;

private:
    /// Answers worker w: its next push (returns true) or a pause (it leaves the slice); ssp: or holds the answer
    /// back (returns false) until the push of `releasedBy` lets it go (releaseHeld).
    bool answer(int worker, bool push, int releasedBy = -1);
    /// ssp: answers the held workers the bound now lets start (`by`: whose push did).
    void releaseHeld(int by, bool push);

    int m_workers = 0;
    std::vector<ParamVector> m_velocity; // per worker, kept by the server
    std::vector<int> m_sliceSize; // per worker
    std::int64_t m_claimedSamples = 0;
    std::int64_t m_pushesLeft = 0;
    int m_active = 0; // workers with a push in flight (not those ssp holds)
    MpiContext::PostedReceives m_gradients;
    ParamVector m_gradient;
    std::vector<std::int64_t> m_pushes; // per worker: its pushes applied (its ssp clock)
    std::vector<std::int64_t> m_clockLead; // per worker: ssp's lead of its push in flight (-1: none)
    std::vector<double> m_heldAt; // per worker: since when ssp holds its answer (< 0: not held)
    std::vector<double> m_boundWait; // per worker: ssp's hold before its push in flight, seconds (< 0: none)
    SspGate m_ssp;
    DelayCompensation m_compensation; // dc-asgd
    std::vector<ParamVector> m_sent; // dc-asgd: per worker, the parameters it was sent for its push in flight
    // The slice under way: when it began (rank 0's clock), the shift to the mode's clock and its pushes so far
    // (closed by trainSome, or by closeOpenWindow when a failure cut it short).
    bool m_sliceOpen = false;
    double m_sliceStart = 0.0;
    double m_sliceShift = 0.0;
    std::vector<UpdateEvent> m_sliceEvents;
};

/// What ranks other than 0 do in an async run: push gradients to rank 0 until it says stop.
void serveMpiAsync(std::shared_ptr<const Problem> problem, const TrainerSettings& settings);

} // namespace sgdscope
