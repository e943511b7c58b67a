#include "core/run/EngineShapes.h"

#include "core/engines/mpi/MpiJobShape.h"
#include "core/engines/sim/SimCluster.h"
#include "core/nn/kernels/Isa.h"

namespace sgdscope {

int mpiJobWorkers(Mode mode, int processes)
{
    return mpiWorkersFor(mode, processes);
}

std::string simulatedClustersText()
{
    return clusterFiguresText();
}

std::string platformFileProblem(
    const std::string& path, int workers, bool server, Placement placement, bool sync, bool async)
{
    return checkPlatformFile(path, workers, server, placement, sync, async);
}

std::string kernelPathProblem()
{
    return isaSettingProblem();
}

std::string kernelPathDescription()
{
    return kernelDescription();
}

} // namespace sgdscope
