#include "core/engines/TrainerFactory.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiAsyncTrainer.h"
#include "core/engines/mpi/MpiBackupTrainer.h"
#include "core/engines/mpi/MpiSyncTrainer.h"
#include "core/engines/sim/SimAsyncTrainer.h"
#include "core/engines/sim/SimServerTrainer.h"
#include "core/engines/sim/SimSyncTrainer.h"
#include "core/engines/threads/ThreadsAsyncTrainer.h"
#include "core/engines/threads/ThreadsLocalSgdTrainer.h"
#include "core/engines/threads/ThreadsSyncTrainer.h"

namespace sgdscope {

std::unique_ptr<Trainer> makeTrainer(
    const EngineChoice& engine, Mode mode, std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    if (engine.kind == EngineKind::Mpi) {
        if (mode == Mode::Sync || mode == Mode::LocalSgd)
            return std::make_unique<MpiSyncTrainer>(std::move(problem), settings, mode);
        if (mode == Mode::Async || mode == Mode::Ssp || mode == Mode::DcAsgd)
            return std::make_unique<MpiAsyncTrainer>(std::move(problem), settings, mode);
        if (mode == Mode::Backup)
            return std::make_unique<MpiBackupTrainer>(std::move(problem), settings);
        throw SgdError(std::string("--mode: ") + modeName(mode) + " does not run across MPI processes");
    }
    if (engine.kind == EngineKind::Sim) {
        // The team-wide modes on their --topology: a parameter server (backup's only one), a tree or an all-reduce.
        if (mode == Mode::Backup || (isSyncLike(mode) && settings.topology == Topology::ParameterServer))
            return std::make_unique<SimServerTrainer>(std::move(problem), settings, engine.sim, engine.simHosts, mode);
        if (isSyncLike(mode))
            return std::make_unique<SimSyncTrainer>(std::move(problem), settings, engine.sim, engine.simHosts, mode);
        return std::make_unique<SimAsyncTrainer>(std::move(problem), settings, engine.sim, engine.simHosts, mode);
    }
    if (mode == Mode::LocalSgd)
        return std::make_unique<ThreadsLocalSgdTrainer>(std::move(problem), settings);
    if (isSyncLike(mode))
        return std::make_unique<ThreadsSyncTrainer>(std::move(problem), settings, mode);
    return std::make_unique<ThreadsAsyncTrainer>(std::move(problem), settings, mode);
}

} // namespace sgdscope
