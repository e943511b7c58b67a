#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/RankReport.h"
#include "core/metrics/WindowCutter.h"

#include <memory>

namespace sgdscope {

/// What rank 0's trainer shares in every MPI mode: the job (MpiContext), the cutter that puts the other ranks'
/// spans, which arrive with their next message, into the mode's windows in order, and the check that the job has
/// the processes the mode needs. The other ranks run the mode's serve function.
class MpiRootTrainer : public Trainer
{
public:
    ~MpiRootTrainer() override;
    const char* engineName() const override { return "mpi"; }
    /// Hands on every window closed so far, with whatever spans of the other ranks arrived for it (those of a rank
    /// that failed never will); a mode whose window was still open closes it first (closeOpenWindow).
    void reportUntilFailure(TrainingObserver& observer) override;

protected:
    MpiRootTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode);

    /// Throws SgdError naming --workers unless the job has the processes the settings' workers need in this mode:
    /// one each, and a parameter server's in the modes that have one (mpiWorkersFor).
    void requireProcesses() const;
    /// Closes the window under way when a failure ended it (async's slice of pushes), with the updates counted in
    /// it; the modes whose windows are one update each have none open.
    virtual void closeOpenWindow() { }

    MpiContext& m_mpi;
    WindowCutter m_cutter;
    CoreTimeSince m_coreTime; // rank 0's threads since the mode began
};

} // namespace sgdscope
