#pragma once

#include "core/common/Json.h"
#include "core/metrics/RunRecorder.h"
#include "core/run/Experiment.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sgdscope {

/// A run without a window, as every front end starts it (sgdscope --headless, the MPI job's rank 0): train
/// the modes one after the other, record them, write the run's files. The charts and the live progress
/// stream are drawn by the ui layer, handed in as functions.

/// One mode's run as a headless run keeps it.
struct HeadlessModeRun
{
    ModeResult result;
    RunRecorder recorder;
};

/// Writes the chart images of a finished run into a folder (provided by the ui layer; may be empty).
using ChartWriter = std::function<void(const std::string& folder, const std::vector<const HeadlessModeRun*>& runs)>;

/// A live view of one mode's run (--progress): it sees every event, and where the run stands after each slice.
class ProgressReporter : public TrainingObserver
{
public:
    virtual void afterSlice(const ModeStanding& standing) = 0;
};
/// Makes the reporter for one mode (provided by the ui layer, which owns the window's values; may be empty).
using ProgressFactory = std::function<std::unique_ptr<ProgressReporter>(Mode mode)>;

/// Installs SIGINT, SIGTERM and SIGUSR1 handlers that ask the run to stop (a second SIGINT or SIGTERM ends the
/// process). SIGUSR1 is a requested stop (the window's Pause of an MPI job, passed on by mpirun): the run ends
/// with exit code 0; SIGINT and SIGTERM end it with 128 + the signal. SIGXFSZ is ignored: a file beyond the size limit
/// is a write error named with its file.
void installInterruptHandlers();
/// The signal that interrupted the run, or 0: this process's own, else the one another rank of an MPI job passed on.
int interruptSignal();
/// On rank 0 of an MPI job: rank `rank` was asked to stop by `signal` (it passed it on through the watch); the run
/// stops as if this process had been signalled (thread-safe, lock-free; this process's own signal takes precedence).
void interruptForRank(int rank, int signal);
/// The rank whose signal stopped the run when this process had none of its own, or -1.
int interruptedRank();
/// The exit code of a run stopped by `signal` (0 for SIGUSR1, a requested stop).
int interruptedExitCode(int signal);

/// The output folder (created) and the other output paths (checked), before any training; the folders it made
/// are removed again if something is refused. Throws SgdError naming the option. Returns the folders it made,
/// deepest last (removeFolders takes them away again if the run does not start after all).
std::vector<std::string> prepareOutputs(const RunConfig& config);
/// Removes the folders prepareOutputs made, deepest first, if they are still empty.
void removeFolders(const std::vector<std::string>& folders);
/// Says (on stderr) what is not an error but worth knowing: workers with nothing to do, a slow fraction that
/// rounds to no worker, a preset's model that takes the data's widths.
void noteBeforeTraining(const PreparedRun& run, const RunConfig& asGiven, int syncWorkers, int asyncWorkers);
/// The modes a configuration runs, in order.
std::vector<Mode> modesOf(const RunConfig& config);

/// Trains one mode, recording it (and streaming it with --progress), and says on stderr how it went.
std::unique_ptr<HeadlessModeRun> trainMode(const PreparedRun& run, Mode mode, const ProgressFactory& progress);

/// Writes every output file, each atomically, and returns the exit code: 0 done, 3 diverged, 1 failed (a run's
/// failure), 128 + signal interrupted (0 for SIGUSR1). summary.json goes first, naming the files still to come
/// (`written_after_this_file`: a stopped MPI job may have a second left, a disk may fill up), then metrics.csv, the
/// charts, the trace and the parameters; then summary.json again without that list, so that a summary without it
/// means every file is there. A file that cannot be written throws SgdError naming it and the cause, and nothing
/// more is written. `engineSummary` is added under the engine's name; `failure` (the job's, e.g. a dead rank) marks
/// the whole run failed. `afterSummary` is called once summary.json and metrics.csv are written.
int writeResults(const PreparedRun& run, const std::vector<std::unique_ptr<HeadlessModeRun>>& runs,
    const ChartWriter& charts, const Json& engineSummary, const std::string& failure = {},
    const std::function<void()>& afterSummary = {});

} // namespace sgdscope
