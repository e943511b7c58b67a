#pragma once

#include "app/CommandLine.h"
#include "core/run/HeadlessStart.h"

#include <string>

namespace sgdscope {

/// Runs `sgdscope --headless`: builds the configuration from the command line, then checks everything, trains
/// the requested modes one after the other and writes summary.json, metrics.csv, the charts and the optional
/// trace and parameters, each atomically (startHeadlessRun). Returns the exit code: 0 done (or stopped by
/// SIGUSR1), 1 failed, 2 bad input (one line on stderr, nothing written; refuseRun), 3 diverged, 130/143
/// interrupted.
int runHeadless(const CommandLine& commandLine, const ChartWriter& charts, const ProgressFactory& progress = {});

} // namespace sgdscope
