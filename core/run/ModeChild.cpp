#include "core/run/ModeChild.h"

#include "core/common/Error.h"
#include "core/run/DataSource.h"
#include "core/run/HeadlessRun.h"
#include "core/run/ModeStream.h"
#include "core/train/ReductionPlan.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sgdscope {

namespace {
std::string g_program;

std::string childProgram()
{
    if (!g_program.empty())
        return g_program;
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        throw SgdError("cannot find this program to run a simulated mode in a process of its own");
    return std::string(path, static_cast<std::size_t>(n));
}

std::string exitText(int status)
{
    if (WIFEXITED(status))
        return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("signal ") + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
    return "status " + std::to_string(status);
}
} // namespace

void setModeChildProgram(const std::string& path)
{
    g_program = path;
}

ModeResult runModeInChild(const PreparedRun& run, Mode mode, TrainingObserver& observer, double sliceSeconds,
    const std::function<void(const ModeStanding&)>& afterSlice)
{
    // Memory held back for recording that runs out of it, as runMode's: freed first (cutShort below), so that what
    // came can be kept.
    std::unique_ptr<char[]> reserve(new char[32 << 20]);
    // Everything the child needs is made before the fork: between fork and exec only async-signal-safe calls.
    std::string program = childProgram();
    std::string flag = "--mode-child";
    std::vector<char*> argv {program.data(), flag.data(), nullptr};
    int toChild[2];
    int fromChild[2];
    if (::pipe2(toChild, O_CLOEXEC) != 0)
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    if (::pipe2(fromChild, O_CLOEXEC) != 0) {
        ::close(toChild[0]);
        ::close(toChild[1]);
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        for (const int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1]})
            ::close(fd);
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM); // it ends with its parent
        ::dup2(toChild[0], 0);
        ::dup2(fromChild[1], 1);
        ::execve(argv.front(), argv.data(), environ);
        static const char failed[] = "sgdscope: cannot run the simulated mode's process\n";
        [[maybe_unused]] const ssize_t written = ::write(2, failed, sizeof failed - 1);
        ::_exit(127);
    }
    ::close(toChild[0]);
    ::close(fromChild[1]);

    int sent = 0;
    auto endChild = [&](bool kill) {
        if (toChild[1] >= 0)
            ::close(toChild[1]);
        toChild[1] = -1;
        if (kill)
            ::kill(pid, SIGKILL);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
        ::close(fromChild[0]);
        return status;
    };
    {
        // A child that dies before reading its request must not end this process with SIGPIPE.
        struct sigaction ignore
        {
        };
        struct sigaction before
        {
        };
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &before);
        try {
            ModeStreamWriter request(toChild[1]);
            writeRequest(request, run, mode, sliceSeconds);
        } catch (const SgdError&) {
            // Its reason comes from the child's end below.
        }
        ::sigaction(SIGPIPE, &before, nullptr);
    }

    RunMetrics metrics(mode);
    ModeResult result;
    result.mode = mode;
    result.engine = "sim";
    result.engineChoice = run.engine;
    result.simCost.emplace(run.problem->spec, run.problem->layout);
    result.settings = run.settings;
    result.settings.chunk = chunkSizeFor(run.settings.chunk, run.settings.batch);
    // Until its result comes: a simulated mode as far as its updates read so far (readModeStream advances it).
    static_cast<ModeProgress&>(result) = progressAtStart(run.settings, true);
    result.finished = true;
    ModeStreamReader in(fromChild[0], [&] {
        // A stop signal this process got is the child's too (it ends its mode in order and reports it).
        if (const int sig = interruptSignal(); sig != 0 && sent != sig) {
            ::kill(pid, sig);
            sent = sig;
        }
    });
    // What came is kept when the run cannot be read to its end (readModeStream kept the updates' count and the last
    // evaluation with them). An update in the figures whose report ran out of memory is reported once more, now that
    // the reading has unwound; if that fails too, the result says so.
    UnreportedUpdate unreported;
    const auto cutShort = [&](std::string failure) { // (the catches below free the reserve first)
        if (!reportAgain(unreported, observer))
            failure += " (not every update could be recorded: out of memory)";
        result.failure = std::move(failure);
        // (Always: the parent never has the mode's final parameters, whatever update its last evaluation was at.)
        result.finalIsLastEvaluation = true;
        result.metrics = std::move(metrics);
    };
    bool ended = false;
    try {
        if (const std::optional<std::string> refused
            = readModeStream(in, metrics, observer, afterSlice, result, run.problem->layout.paddedSize(), unreported)) {
            endChild(false);
            ended = true;
            throw SgdError(*refused);
        }
    } catch (const std::runtime_error& e) {
        if (dynamic_cast<const SgdError*>(&e)) {
            if (!ended) // (the observer's own error: the child would wait on its stream for ever)
                endChild(true);
            throw;
        }
        // The stream ended (or made no sense) before the result: the child died.
        reserve.reset();
        const int status = endChild(true);
        cutShort("the simulated mode's process ended before its result (" + exitText(status) + ")");
        return result;
    } catch (const std::bad_alloc&) {
        // This process ran out of memory recording what came: the child is ended (it would wait on its stream for
        // ever).
        reserve.reset();
        endChild(true);
        cutShort("out of memory while recording the simulated mode's run");
        return result;
    }
    endChild(false);
    result.metrics = std::move(metrics);
    return result;
}

int serveModeChild()
{
    installInterruptHandlers();
    // The stream goes to the parent on what was standard output; anything else printed goes to standard error.
    const int streamFd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (streamFd < 0 || ::dup2(2, 1) < 0) {
        std::fprintf(stderr, "sgdscope: --mode-child: cannot set up its stream\n");
        return 2;
    }
    ModeStreamWriter out(streamFd);
    try {
        ModeStreamReader in(0, {});
        const ModeRequest request = readRequest(in);
        const PreparedRun run
            = prepareRun(request.config, std::make_shared<DataSplit>(loadData(request.config)), &request.engine);
        if (!(shapeOf(run) == request.shape))
            throw SgdError("the simulated mode's process prepared another run than its parent (batch, workers, steps "
                           "or parameters differ)");
        StreamingObserver observer(out);
        const ModeResult r = request.sliceSeconds > 0 ? runMode(run, request.mode, observer, request.sliceSeconds,
                                 [&](const Trainer& trainer) { writeStanding(out, progressOf(trainer)); })
                                                      : runMode(run, request.mode, observer);
        writeResult(out, r);
        return 0;
    } catch (const SgdError& e) {
        try {
            writeRefusal(out, e.what());
        } catch (const SgdError&) {
            std::fprintf(stderr, "sgdscope: %s\n", e.what());
        }
        return 2;
    }
}

} // namespace sgdscope
