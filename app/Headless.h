#pragma once

#include "app/CommandLine.h"
#include "core/run/HeadlessRun.h"

#include <string>

namespace sgdscope {

/// Runs `sgdscope --headless`: checks everything, trains the requested modes one after the other and writes
/// summary.json, metrics.csv, the charts and the optional trace and parameters, each atomically (core/run's
/// HeadlessRun; an MPI job's processes run core's MpiJob). Returns the exit code: 0 done (or stopped by
/// SIGUSR1), 1 failed, 2 bad input (one line on stderr, nothing written), 3 diverged, 130/143 interrupted.
int runHeadless(const CommandLine& commandLine, const ChartWriter& charts, const ProgressFactory& progress = {});

/// Refuses the command line with exit code 2. Under mpirun with several processes, the processes agree first
/// (MpiJob's agreement): one message for a problem every rank has, each rank's own otherwise. A problem that
/// depends on the host (`sameOnEveryRank` false: the CPU's instruction sets) is said by every rank that finds
/// it, with its rank.
int refuseCommandLine(const std::string& problem, bool sameOnEveryRank = true);

} // namespace sgdscope
