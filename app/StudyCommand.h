#pragma once

#include "app/CommandLine.h"
#include "core/run/study/StudyRunner.h"

#include <string>
#include <vector>

namespace sgdscope {

/// Runs `sgdscope --study DIR ...`: builds the study from the command line's study flags and run options, then
/// runs it on this machine, or, under mpirun with several processes, shares its points among the ranks
/// (core/run/study/StudyMpi.h). `args` are the arguments as typed (for study.json). Returns the exit code
/// (runStudy's).
int runStudyCommand(
    const CommandLine& commandLine, const std::vector<std::string>& args, const StudyChartWriter& charts);

} // namespace sgdscope
