#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// A point's run as an executor starts it: `sgdscope` (this very binary) with `args`, its run folder `folder`.
struct PointLaunch
{
    std::string id;
    std::string folder; // where its run folder goes (DIR/points/ID)
    std::vector<std::string> args; // --headless --out FOLDER [--config FILE] --name=value ...
    std::vector<std::pair<std::string, std::string>> environment; // set for it (e.g. OMP_NUM_THREADS)
};

/// Where a started point runs: the MPI rank (-1: here) and the process id of its process (local) or rank.
struct PointStart
{
    int rank = -1;
    long pid = 0;
};

/// How a point's run ended.
struct PointEnd
{
    std::string id;
    int exitCode = 0; // the process's exit code; 128 + the signal that ended it
    double wallSeconds = 0.0;
    std::string problem; // the run's last line on stderr when it failed or was refused, or why it was lost
    bool lost = false; // its MPI rank died
    int rank = -1;
};

/// Runs points: as child processes of this one (LocalPointExecutor), or on the ranks of an MPI job
/// (StudyMpi.h). The study (StudyRunner.h) decides what runs when; an executor only starts, waits and stops.
/// Called from one thread.
class PointExecutor
{
public:
    virtual ~PointExecutor() = default;
    /// How many points may run at once.
    virtual int slots() const = 0;
    virtual int running() const = 0;
    /// Starts a point (a slot must be free). Throws SgdError if it cannot be started.
    virtual PointStart start(const PointLaunch& launch) = 0;
    /// Waits up to `seconds` for points to end; returns those that ended (possibly none).
    virtual std::vector<PointEnd> wait(double seconds) = 0;
    /// Passes a stop signal to every running point (they write an interrupted summary and end); wait() returns
    /// them as they end.
    virtual void interrupt(int signal) = 0;
    /// Ends the running points at once (SIGKILL), after an interrupt they did not answer in time.
    virtual void kill() = 0;
    /// Whether this executor can run no more points: an MPI job that lost a rank has ended (mpirun ends the whole
    /// job when one of its processes dies). wait() has returned the points lost with it; the others still running
    /// will not be heard of again. The study then stops at once.
    virtual bool ended() const { return false; }
    /// Why it ended, one sentence for the user ("rank 2 is gone: its process ended ..."); "" while it has not.
    virtual std::string endReason() const { return {}; }
};

/// The arguments of a point's headless run: --headless --out FOLDER [--config FILE] and its options as
/// --name=value (a value may start with a dash).
std::vector<std::string> pointArguments(const std::vector<std::pair<std::string, std::string>>& options,
    const std::string& folder, const std::string& configFile);

/// The environment of a point's process: this one's, without the variables that would make it think it is
/// part of this process's MPI job (OMPI_*, PMIX_*, PMI_*, ...), with `extra` set.
std::vector<std::string> pointEnvironment(const std::vector<std::pair<std::string, std::string>>& extra);

/// This program's own path (/proc/self/exe), which the points run.
std::string thisProgram();

} // namespace sgdscope
