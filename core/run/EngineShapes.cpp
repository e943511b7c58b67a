#include "core/run/EngineShapes.h"

#include "core/engines/mpi/MpiJobShape.h"
#include "core/engines/sim/SimCluster.h"
#include "core/nn/kernels/Isa.h"

namespace sgdscope {

Topology resolvedTopology(const RunConfig& config, Mode mode)
{
    if (config.engine != EngineKind::Mpi || config.origins.count("topology"))
        return config.topology;
    return mpiDefaultTopology(mode, config.runs(Mode::Backup));
}

Topology mpiDefaultTopology(Mode mode, bool backupInJob)
{
    return mode == Mode::Sync && backupInJob ? Topology::ParameterServer : Topology::Tree;
}

Topology resolvedTopology(const RunConfig& config)
{
    return resolvedTopology(config, Mode::Sync);
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

std::string PlatformFileChecks::problem(
    const std::string& path, int workers, Placement placement, const RunConfig& config)
{
    // What platformFileProblem's answer depends on: the file, the hosts, and the routes the modes use.
    const bool teamWide = config.runsSync();
    const std::string key = path + '\n' + std::to_string(workers) + ' ' + std::to_string(static_cast<int>(placement))
        + ' ' + std::to_string(needsParameterServer(config)) + ' ' + std::to_string(teamWide) + ' '
        + std::to_string(static_cast<int>(config.topology));
    const auto known = m_answers.find(key);
    if (known != m_answers.end())
        return known->second;
    return m_answers[key] = platformFileProblem(path, workers, placement, config);
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
