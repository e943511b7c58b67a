#include "core/run/EngineShapes.h"

#include "core/engines/mpi/MpiJobShape.h"
#include "core/engines/sim/SimCluster.h"
#include "core/nn/kernels/Isa.h"

namespace sgdscope {

Topology resolvedTopology(const RunConfig& config)
{
    return config.engine == EngineKind::Mpi && !config.origins.count("topology") ? Topology::Tree : config.topology;
}

int mpiJobWorkers(Mode mode, int processes, Topology topology)
{
    return mpiWorkersFor(mode, processes, topology);
}

std::string simulatedClustersText()
{
    return clusterFiguresText();
}

bool needsParameterServer(const RunConfig& config)
{
    return config.runsAsync() || config.runs(Mode::Backup)
        || (config.runsSync() && resolvedTopology(config) == Topology::ParameterServer);
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
