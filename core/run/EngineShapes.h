#pragma once

#include "core/metrics/Events.h"
#include "core/run/RunConfig.h"

#include <string>

namespace sgdscope {

// What the front ends know of each engine's shape: how many workers a job has, which clusters there are, whether
// a platform file takes a run, which kernels this process computes with. The window and the command line reach
// the engines only through core/run (DESIGN's import direction); these are their questions.

/// How many workers an MPI job of `processes` has in `mode`: every process in sync and local-sgd, all but rank 0
/// (the parameter server) in the others.
int mpiJobWorkers(Mode mode, int processes);

/// One line per built-in simulated cluster with its figures, separated by "; " (for --help and the README).
std::string simulatedClustersText();

/// Whether the SimGrid platform file at `path` takes `workers` workers (and a parameter server if `server`)
/// placed by `placement`, with every route sync's tree (`sync`) and the server's workers (`async`) use: "" if
/// so, else the reason in one line naming the host, link or file. Checked in a child process (SimGrid aborts
/// on some errors).
std::string platformFileProblem(
    const std::string& path, int workers, bool server, Placement placement, bool sync, bool async);

/// A kernel path forced by SGDSCOPE_ISA that does not exist or that this CPU lacks ("" if none).
std::string kernelPathProblem();
/// "kernel order N, avx512 path": what --version says of the kernels.
std::string kernelPathDescription();

} // namespace sgdscope
