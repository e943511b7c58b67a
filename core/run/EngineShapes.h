#pragma once

#include "core/metrics/Events.h"
#include "core/run/RunConfig.h"

#include <map>
#include <string>

namespace sgdscope {

// What the front ends know of each engine's shape: how many workers a job has, which clusters there are, whether
// a platform file takes a run, which kernels this process computes with. The window and the command line reach
// the engines only through core/run (DESIGN's import direction); these are their questions.

/// How many workers an MPI job of `processes` has in `mode`: every process in sync on the tree (MPI's default
/// wires) and in local-sgd, all but rank 0 (the parameter server) in the others and in sync on --topology ps.
int mpiJobWorkers(Mode mode, int processes, Topology topology = Topology::Tree);

/// The wires `mode` runs on: --topology as given; across MPI processes without it, mpiDefaultTopology (sync
/// beside backup on backup's server, so that the two compare on the same wires, as on the simulated cluster).
Topology resolvedTopology(const RunConfig& config, Mode mode);
/// The wires `mode` takes across MPI processes when --topology is not given: sync on backup's parameter server
/// when backup runs in the same job (`backupInJob`), else the tree; the others on their only wires there.
Topology mpiDefaultTopology(Mode mode, bool backupInJob);
/// Sync's wires (resolvedTopology(config, Mode::Sync)): the team-wide modes' on one engine but MPI.
Topology resolvedTopology(const RunConfig& config);

/// Whether `config`'s modes need a parameter server on the simulated cluster: the pushing modes, backup, and the
/// team-wide modes on --topology ps (its host comes after the workers').
bool needsParameterServer(const RunConfig& config);

/// One line per built-in simulated cluster with its figures, separated by "; " (for --help and the README).
std::string simulatedClustersText();

/// Whether the SimGrid platform file at `path` takes `workers` workers (and a parameter server if `server`)
/// placed by `placement`, with every route `config`'s modes use on its --topology (a tree's, the server's, or
/// every pair's for an all-reduce): "" if so, else the reason in one line naming the host, link or file. Checked
/// in a child process (SimGrid aborts on some errors).
std::string platformFileProblem(const std::string& path, int workers, Placement placement, const RunConfig& config);

/// platformFileProblem's answers, kept: a study checks each platform file at each worker count and wiring once,
/// however many points share them. Not thread-safe.
class PlatformFileChecks
{
public:
    std::string problem(const std::string& path, int workers, Placement placement, const RunConfig& config);

private:
    std::map<std::string, std::string> m_answers;
};

/// A kernel path forced by SGDSCOPE_ISA that does not exist or that this CPU lacks ("" if none).
std::string kernelPathProblem();
/// "kernel order N, avx512 path": what --version says of the kernels.
std::string kernelPathDescription();

} // namespace sgdscope
