#include "core/run/MpiLinkCalibration.h"

#include "core/common/Error.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sgdscope {

namespace {

constexpr std::uint64_t smallMessageBytes = 8;
/// The bandwidth is measured at the run's message size, or at this if smaller: below it a message's time is about
/// its latency, and the difference would be noise.
constexpr std::uint64_t smallestBandwidthBytes = 64 * 1024;
constexpr int probeRoundTrips = 100; // per size, after the probe's warm-up
constexpr double probeTimeoutSeconds = 60.0;

std::string prefix(const std::string& option)
{
    return option + " local-mpi: ";
}

/// `name` found on PATH as an executable file, or "".
std::string onPath(const std::string& name)
{
    const char* path = std::getenv("PATH");
    std::stringstream folders(path ? path : "");
    for (std::string folder; std::getline(folders, folder, ':');) {
        const std::string candidate = (folder.empty() ? std::string(".") : folder) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return {};
}

/// (median, (75th - 25th percentile) / median) of `v` (not empty).
std::pair<double, double> medianAndSpread(std::vector<double>& v)
{
    std::sort(v.begin(), v.end());
    auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)]; };
    const double median = at(0.5);
    return {median, median > 0 ? (at(0.75) - at(0.25)) / median : 0.0};
}

/// The last line of `text` that says something, on one line and at most 300 characters.
std::string lastLine(const std::string& text)
{
    std::string line;
    std::stringstream lines(text);
    for (std::string l; std::getline(lines, l);) {
        if (l.find_first_not_of(" \t\r-") != std::string::npos) // not blank, not one of mpirun's rules of dashes
            line = l;
    }
    if (line.size() > 300)
        line = line.substr(0, 300) + "...";
    return line.empty() ? std::string("it printed nothing") : line;
}

} // namespace

std::string mpiProbePath()
{
    if (const char* given = std::getenv("SGDSCOPE_MPI_PROBE"); given && *given)
        return given;
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return "sgdscope-mpi-probe";
    const std::string exe(self, static_cast<std::size_t>(n));
    return exe.substr(0, exe.rfind('/') + 1) + "sgdscope-mpi-probe";
}

MpiLinkCalibration mpiLinkFromRoundTrips(std::vector<double> small, std::uint64_t smallBytes, std::vector<double> large,
    std::uint64_t messageBytes, const std::string& option)
{
    if (small.empty() || large.empty())
        throw SgdError(prefix(option) + "the MPI probe gave no round trips at " + std::to_string(smallBytes) + " and "
            + std::to_string(messageBytes) + " bytes");
    MpiLinkCalibration c;
    c.smallBytes = smallBytes;
    c.messageBytes = messageBytes;
    c.roundTrips = static_cast<int>(std::min(small.size(), large.size()));
    const auto [smallTrip, smallSpread] = medianAndSpread(small);
    const auto [largeTrip, largeSpread] = medianAndSpread(large);
    c.latencySeconds = smallTrip / 2.0;
    c.latencySpread = smallSpread;
    c.messageSeconds = largeTrip / 2.0;
    c.bandwidthSpread = largeSpread;
    if (!(c.messageSeconds > c.latencySeconds) && messageBytes > smallBytes) {
        // A machine so busy that the kernel's time slices drown the message's own time (the median at the message
        // size no longer above the small size's): the shortest round trips, what a message costs when it is not
        // held up; busy() says so.
        c.latencySeconds = *std::min_element(small.begin(), small.end()) / 2.0;
        c.messageSeconds = *std::min_element(large.begin(), large.end()) / 2.0;
        c.fromShortest = true;
    }
    if (!(c.latencySeconds > 0) || !(c.messageSeconds > c.latencySeconds) || messageBytes <= smallBytes)
        throw SgdError(prefix(option) + "the MPI probe measured a one-way time of "
            + std::to_string(c.messageSeconds * 1e6) + " us for " + std::to_string(messageBytes)
            + " bytes against a latency of " + std::to_string(c.latencySeconds * 1e6) + " us for "
            + std::to_string(smallBytes) + ": no bandwidth follows from that; try again on a quieter machine");
    c.bandwidthBytesPerSecond = static_cast<double>(messageBytes) / (c.messageSeconds - c.latencySeconds);
    return c;
}

MpiLinkCalibration calibrateMpiLinks(int processes, std::uint64_t messageBytes, int cores, const std::string& option)
{
    const std::string mpirun = onPath("mpirun");
    if (mpirun.empty())
        throw SgdError(prefix(option)
            + "mpirun was not found on PATH; install Open MPI (Debian: openmpi-bin) to "
              "measure its messages, or use --cluster local");
    const std::string probe = mpiProbePath();
    if (::access(probe.c_str(), X_OK) != 0)
        throw SgdError(prefix(option) + "the MPI probe '" + probe
            + "' is missing or not executable; build it beside sgdscope (cmake --build build --target "
              "sgdscope-mpi-probe; it needs libopenmpi-dev) or set SGDSCOPE_MPI_PROBE to it");
    const std::uint64_t large = std::max(messageBytes, smallestBandwidthBytes);
    const bool root = ::geteuid() == 0;
    std::vector<std::string> words {mpirun};
    if (root)
        words.emplace_back("--allow-run-as-root");
    for (const char* w : {"--oversubscribe", "--bind-to", "none", "-np"})
        words.emplace_back(w);
    words.push_back(std::to_string(std::max(2, processes)));
    words.push_back(probe);
    words.push_back(std::to_string(smallMessageBytes));
    words.push_back(std::to_string(large));
    words.emplace_back("--round-trips");
    words.push_back(std::to_string(probeRoundTrips));
    std::string command;
    for (std::size_t i = 0; i < words.size(); ++i)
        command += (i ? " " : "") + words[i];

    // Everything the child needs is made before the fork: this process may have other threads (the window's), and
    // between fork and exec the child may only make async-signal-safe calls (no allocation, no setenv).
    std::vector<char*> argv;
    for (std::string& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment;
    for (char** e = environ; e && *e; ++e)
        environment.emplace_back(*e);
    if (root) // our own probe's job: the user chose to run as root
        environment.insert(environment.end(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
    std::vector<char*> envp;
    for (std::string& e : environment)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) // not inherited by what another thread may start meanwhile
        throw SgdError(prefix(option) + "cannot start mpirun (pipe failed)");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        throw SgdError(prefix(option) + "cannot start mpirun (fork failed)");
    }
    if (pid == 0) {
        ::setpgid(0, 0); // a group of its own (Open MPI puts each rank in its own: mpirun ends them on SIGTERM)
        const int nothing = ::open("/dev/null", O_RDONLY); // mpirun would pass our stdin on to rank 0
        if (nothing >= 0)
            ::dup2(nothing, 0);
        ::dup2(pipeFds[1], 1);
        ::dup2(pipeFds[1], 2);
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        ::execve(argv.front(), argv.data(), envp.data());
        static const char failed[] = "cannot run mpirun\n";
        [[maybe_unused]] const ssize_t written = ::write(2, failed, sizeof failed - 1);
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    std::string output;
    bool timedOut = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(probeTimeoutSeconds);
    for (char buffer[4096];;) {
        const auto left
            = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
                  .count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        pollfd ready {pipeFds[0], POLLIN, 0};
        const int r = ::poll(&ready, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        const ssize_t n = ::read(pipeFds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(pipeFds[0]);
    int status = 0;
    if (timedOut) {
        // mpirun passes SIGTERM on to its ranks and ends them; if it has not ended within 5 s, it is killed.
        ::kill(-pid, SIGTERM);
        const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (::waitpid(pid, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > grace) {
                ::kill(-pid, SIGKILL);
                break;
            }
            ::usleep(10000);
        }
    }
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (timedOut)
        throw SgdError(prefix(option) + "measuring Open MPI ('" + command + "') did not finish within "
            + std::to_string(static_cast<int>(probeTimeoutSeconds)) + " s");

    std::map<std::uint64_t, std::vector<double>> trips;
    bool done = false;
    double waitedShare = -1.0;
    std::stringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        std::stringstream fields(line);
        std::string word;
        fields >> word;
        if (word == "done")
            done = true;
        if (word == "waited-for-a-core")
            fields >> waitedShare;
        if (word != "round-trips")
            continue;
        std::uint64_t bytes = 0;
        fields >> bytes;
        std::vector<double>& v = trips[bytes];
        for (double s; fields >> s;)
            v.push_back(s);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !done)
        throw SgdError(prefix(option) + "measuring Open MPI ('" + command
            + "') gave no round trips (is it sgdscope-mpi-probe?): " + lastLine(output));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw SgdError(prefix(option) + "measuring Open MPI ('" + command + "') failed ("
            + (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                 : "signal " + std::to_string(WTERMSIG(status)))
            + "): " + lastLine(output));
    MpiLinkCalibration c
        = mpiLinkFromRoundTrips(trips[smallMessageBytes], smallMessageBytes, trips[large], large, option);
    c.processes = std::max(2, processes);
    c.cores = cores;
    c.waitedForACoreShare = waitedShare;
    return c;
}

} // namespace sgdscope
