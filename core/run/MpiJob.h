#pragma once

#include "core/run/HeadlessRun.h"

#include <string>

namespace sgdscope {

/// One process's part of an MPI job: `mpirun -np N sgdscope --headless --engine mpi ...` (the window starts
/// the same command line and reads rank 0's progress stream). Every process of the job runs this:
/// 1. the processes agree on the command line: any rank's refusal reaches the user once (one line for a
///    problem every rank has, one per rank otherwise), and so does a rank given other options; exit 2;
/// 2. the watch starts (PeerWatch: from here a peer is given up only when its process is gone, silent for
///    --peer-timeout, or failed, never because it is busy loading, evaluating or computing);
/// 3. each process loads its own copy of the data and checks it (the same data on every rank, messages
///    within MPI's 2 GiB), then the clocks are compared;
/// 4. rank 0 trains each mode (worker 0 in sync, the parameter server in async) and writes every file; the
///    others serve it;
/// 5. a stop signal, a dead, hung or failed rank, or an error on any rank after training began: rank 0
///    writes summary.json and metrics.csv first (marked interrupted or failed, with what was done, without a
///    final evaluation), then the rest, and says which rank failed and why, once. SIGUSR1 is a requested stop:
///    the job ends with exit code 0.
/// `config` is this rank's configuration, or null when this rank's command line was refused with `problem`.
int runMpiJob(
    const RunConfig* config, const std::string& problem, const ChartWriter& charts, const ProgressFactory& progress);

} // namespace sgdscope
