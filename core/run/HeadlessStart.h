#pragma once

#include "core/run/HeadlessRun.h"

#include <string>

namespace sgdscope {

/// Starts `sgdscope --headless` once its configuration is built: under mpirun with several processes, or with
/// --engine mpi, this process's part of the MPI job (run/MpiJob.h); else every mode here, one after the other,
/// and the run's files. Everything that can be wrong with the input is found before anything is written.
/// Returns the exit code: 0 done (or stopped by SIGUSR1), 1 failed, 2 bad input (one line on stderr, nothing
/// written), 3 diverged, 130/143 interrupted.
int startHeadlessRun(const RunConfig& config, const ChartWriter& charts, const ProgressFactory& progress);

/// Refuses a command line with exit code 2, saying `problem` on stderr. Under mpirun with several processes,
/// the processes agree first (MpiJob's agreement): one message for a problem every rank has, each rank's own
/// otherwise. A problem that depends on the host (`sameOnEveryRank` false: the CPU's instruction sets) is said
/// by every rank that finds it, with its rank.
int refuseRun(const std::string& problem, bool sameOnEveryRank = true);

} // namespace sgdscope
