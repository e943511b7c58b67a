#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/metrics/WindowCutter.h"

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
/// This object is rank 0's; the other ranks run serveMpiAsync().
class MpiAsyncTrainer final : public Trainer
{
public:
    MpiAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings);
    ~MpiAsyncTrainer() override;
    const char* engineName() const override { return "mpi"; }
    void endOfRun(TrainingObserver& observer) override;

protected:
    void trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer) override;
    void settingsChanged() override;

private:
    /// Sends worker w its next push (or a pause); returns whether it got a push.
    bool answer(int worker, bool push);

    MpiContext& m_mpi;
    int m_workers = 0;
    std::vector<ParamVector> m_velocity; // per worker, kept by the server
    std::vector<int> m_sliceSize; // per worker
    std::int64_t m_claimedSamples = 0;
    std::int64_t m_pushesLeft = 0;
    MpiContext::PostedReceives m_gradients;
    WindowCutter m_cutter;
    ParamVector m_gradient;
};

/// What ranks other than 0 do in an async run: push gradients to rank 0 until it says stop.
void serveMpiAsync(std::shared_ptr<const Problem> problem, const TrainerSettings& settings);

} // namespace sgdscope
