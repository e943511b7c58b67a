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

bool needsParameterServer(const RunConfig& config)
{
    return config.runsAsync() || config.runs(Mode::Backup)
        || (config.runsSync() && config.topology == Topology::ParameterServer);
}

std::string platformFileProblem(const std::string& path, int workers, Placement placement, const RunConfig& config)
{
    const bool teamWide = config.runsSync();
    const bool server = needsParameterServer(config);
    return checkPlatformFile(path, workers, server, placement, teamWide && config.topology == Topology::Tree, server,
        teamWide && config.topology == Topology::AllReduce);
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
