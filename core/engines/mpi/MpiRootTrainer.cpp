#include "core/engines/mpi/MpiRootTrainer.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiJobShape.h"

#include <string>

namespace sgdscope {

MpiRootTrainer::MpiRootTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_mpi(MpiContext::get())
{
}

MpiRootTrainer::~MpiRootTrainer() = default;

void MpiRootTrainer::reportUntilFailure(TrainingObserver& observer)
{
    Trainer::reportUntilFailure(observer); // the update under way first: it comes before the rest of its window
    closeOpenWindow();
    reportCut(m_cutter, observer, true);
}

void MpiRootTrainer::requireProcesses() const
{
    const int workers = m_settings.workers;
    const int fit = mpiWorkersFor(mode(), m_mpi.size(), m_settings.topology);
    if (workers == fit)
        return;
    const std::string job = ", and the job has " + std::to_string(m_mpi.size());
    if (fit == m_mpi.size())
        throw SgdError("--workers: " + std::to_string(workers) + " sync workers need as many MPI processes" + job);
    throw SgdError("--workers: " + std::to_string(workers)
        + (isSyncLike(mode()) ? " " + std::string(modeName(mode())) : std::string(" async"))
        + " workers and a parameter server need " + std::to_string(workers + 1) + " MPI processes" + job);
}

} // namespace sgdscope
