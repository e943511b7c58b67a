#pragma once

#include "app/CommandLine.h"
#include "core/metrics/RunRecorder.h"
#include "core/run/Experiment.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sgdscope {

/// One mode's run as the headless front end keeps it.
struct HeadlessModeRun
{
    ModeResult result;
    RunRecorder recorder;
};

/// Writes the chart images of a finished run into a folder (provided by the ui layer; may be empty).
using ChartWriter = std::function<void(const std::string& folder, const std::vector<const HeadlessModeRun*>& runs)>;

/// A live view of one mode's run (--progress): it sees every event and the trainer after each slice.
class ProgressReporter : public TrainingObserver
{
public:
    virtual void afterSlice(const Trainer& trainer) = 0;
};
/// Makes the reporter for one mode (provided by the ui layer, which owns the window's values; may be empty).
using ProgressFactory = std::function<std::unique_ptr<ProgressReporter>(Mode mode)>;

/// Runs `sgdscope --headless`: checks everything, trains the requested modes one after the other and writes
/// summary.json, metrics.csv, the charts and the optional trace and parameters, each atomically. Returns
/// the exit code: 0 done, 2 bad input (one line on stderr, nothing written), 3 diverged, 130/143 interrupted.
int runHeadless(const CommandLine& commandLine, const ChartWriter& charts, const ProgressFactory& progress = {});

/// Refuses the command line with exit code 2. Under mpirun every process reads the same command line and
/// finds the same problem: rank 0 says it, and the other ranks end a second later, since mpirun ends the
/// whole job at the first non-zero exit and could otherwise end rank 0 before its message is out. A problem
/// that depends on the host (`sameOnEveryRank` false: the CPU's instruction sets) is said by every rank
/// that finds it, with its rank.
int refuseCommandLine(const std::string& problem, bool sameOnEveryRank = true);

/// Installs SIGINT/SIGTERM handlers that ask the run to stop (the second signal ends the process).
void installInterruptHandlers();
/// The signal that interrupted the run, or 0.
int interruptSignal();

} // namespace sgdscope
