#include "core/engines/sim/SimCluster.h"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sgdscope {

LinkFigures linkFiguresOf(ClusterKind kind, const MpiLinkCalibration& measured)
{
    switch (kind) {
    case ClusterKind::Ideal:
        return {1e15, 0.0, true};
    case ClusterKind::Local:
        return {1e15, 0.0, true}; // workers share memory: no messages (copies are priced as memory work)
    case ClusterKind::LocalMpi:
        return {measured.bandwidthBytesPerSecond, measured.latencySeconds / 2.0, false};
    case ClusterKind::Datacenter:
        return {1.25e9, 10e-6, false};
    case ClusterKind::Wan:
        return {1.25e8, 15e-3, false};
    }
    return {};
}

std::string clusterFiguresText()
{
    return "ideal: equal hosts of 50 Gflop/s, a network without cost (the textbook model); "
           "local: hosts as fast as a worker of this machine on this model and its memory bandwidth (measured at "
           "start), no messages: workers share memory; "
           "local-mpi: local's hosts, and messages timed as this machine's Open MPI carries them (latency and "
           "bandwidth measured at start by a ping-pong under mpirun, in a job of as many processes as the one "
           "modelled, "
           "at most 64; with more processes than cores each gets its share of a core); "
           "datacenter: 50 Gflop/s hosts, 10 Gb/s links, 20 us host to host through one switch; "
           "wan: 50 Gflop/s hosts, 1 Gb/s links, 30 ms host to host";
}

std::string placeWorkers(
    const std::vector<int>& coresPerHost, int workers, bool server, Placement placement, std::vector<int>& hostOf)
{
    hostOf.clear();
    const int actors = workers + (server ? 1 : 0);
    std::size_t host = 0;
    int used = 0; // cores of `host` taken
    while (static_cast<int>(hostOf.size()) < actors && host < coresPerHost.size()) {
        const int cores = placement == Placement::Pack ? std::max(1, coresPerHost[host]) : 1;
        if (used < cores) {
            hostOf.push_back(static_cast<int>(host));
            ++used;
        } else {
            ++host;
            used = 0;
        }
    }
    if (static_cast<int>(hostOf.size()) == actors)
        return {};
    const std::string who
        = std::to_string(workers) + (workers == 1 ? " worker" : " workers") + (server ? " and a parameter server" : "");
    if (placement == Placement::Spread)
        return "it has " + std::to_string(coresPerHost.size()) + " hosts, and " + who + " need "
            + std::to_string(actors) + " with --placement spread (one each; --placement pack fills every host's "
            + "cores)";
    long long cores = 0;
    for (const int c : coresPerHost)
        cores += std::max(1, c);
    return "its hosts have " + std::to_string(cores) + " cores in all, and " + who + " need " + std::to_string(actors);
}

std::vector<std::pair<int, int>> routesNeeded(
    const std::vector<int>& hostOf, int workers, bool sync, bool async, bool allPairs)
{
    std::vector<std::pair<int, int>> pairs;
    auto both = [&](int a, int b) {
        const int ha = hostOf[static_cast<std::size_t>(a)];
        const int hb = hostOf[static_cast<std::size_t>(b)];
        if (ha != hb) {
            pairs.emplace_back(ha, hb);
            pairs.emplace_back(hb, ha);
        }
    };
    for (int w = 1; w < workers && sync; ++w)
        both(w, w - (w & -w));
    for (int w = 0; w < workers && async; ++w)
        both(w, workers);
    for (int a = 0; a < workers && allPairs; ++a) {
        for (int b = a + 1; b < workers; ++b)
            both(a, b);
    }
    return pairs;
}

namespace {
std::string shortNumber(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

/// The profile files a platform file names (speed_file, bandwidth_file, state_file attributes), read as SimGrid
/// reads them (relative to the platform file's folder): "" if none would stop the simulation, else why. A speed
/// or bandwidth that falls to 0 makes SimGrid abort; a host that turns off takes its workers with it, which the
/// simulated cluster does not model (nobody takes over their work).
std::string unusableProfile(const std::string& platformPath)
{
    std::string xml;
    if (std::FILE* file = std::fopen(platformPath.c_str(), "rb")) {
        char buffer[65536];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
            xml.append(buffer, n);
        std::fclose(file);
    }
    const std::string folder
        = platformPath.find('/') == std::string::npos ? "." : platformPath.substr(0, platformPath.rfind('/'));
    static const std::regex attribute(R"re(\b(speed_file|bandwidth_file|state_file)\s*=\s*"([^"]*)")re");
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), attribute); it != std::sregex_iterator(); ++it) {
        const std::string kind = (*it)[1];
        const std::string name = (*it)[2];
        if (kind == "state_file")
            return "state_file '" + name
                + "' turns a host off and on, which the simulated cluster does not model "
                  "(nobody takes over a lost worker's part)";
        std::ifstream profile(name.empty() || name.front() == '/' ? name : folder + "/" + name);
        std::string line;
        for (int number = 1; std::getline(profile, line); ++number) {
            double date = 0.0;
            double value = 0.0;
            if (std::sscanf(line.c_str(), "%lf %lf", &date, &value) == 2 && !(value > 0))
                return kind + " '" + name + "' line " + std::to_string(number) + " sets the "
                    + (kind == "speed_file" ? "speed" : "bandwidth") + " to " + shortNumber(value)
                    + "; it must stay above 0";
        }
    }
    return {};
}

/// In the checking child: the first thing of the loaded platform that would stop a simulation, or "".
std::string unusablePart(const simgrid::s4u::Engine& engine, int workers, bool server, Placement placement, bool sync,
    bool async, bool allPairs)
{
    const std::vector<simgrid::s4u::Host*> hosts = engine.get_all_hosts();
    std::vector<int> cores;
    for (simgrid::s4u::Host* h : hosts) {
        for (unsigned long p = 0; p < h->get_pstate_count(); ++p) {
            const double speed = h->get_pstate_speed(p);
            if (!(speed > 0) || !std::isfinite(speed))
                return "host '" + h->get_name() + "' has a speed of " + shortNumber(speed)
                    + (h->get_pstate_count() > 1 ? " flop/s in its pstate " + std::to_string(p) : " flop/s")
                    + "; every host needs a speed above 0";
        }
        cores.push_back(h->get_core_count());
    }
    for (simgrid::s4u::Link* l : engine.get_all_links()) {
        const double bandwidth = l->get_bandwidth();
        if (!(bandwidth > 0) || !std::isfinite(bandwidth))
            return "link '" + l->get_name() + "' has a bandwidth of " + shortNumber(bandwidth)
                + " B/s; every link needs a bandwidth above 0";
        if (!(l->get_latency() >= 0) || !std::isfinite(l->get_latency()))
            return "link '" + l->get_name() + "' has a latency of " + shortNumber(l->get_latency()) + " s";
    }
    std::vector<int> hostOf;
    if (std::string why = placeWorkers(cores, workers, server, placement, hostOf); !why.empty())
        return why;
    for (const auto& [a, b] : routesNeeded(hostOf, workers, sync, async, allPairs)) {
        std::vector<simgrid::s4u::Link*> links;
        double latency = 0.0;
        hosts[static_cast<std::size_t>(a)]->route_to(hosts[static_cast<std::size_t>(b)], links, &latency);
        if (links.empty() && latency <= 0)
            return "there is no route from host " + hosts[static_cast<std::size_t>(a)]->get_name() + " to host "
                + hosts[static_cast<std::size_t>(b)]->get_name();
    }
    return {};
}
} // namespace

std::string checkPlatformFile(
    const std::string& path, int workers, bool server, Placement placement, bool sync, bool async, bool allPairs)
{
    int pipeFds[2];
    if (::pipe(pipeFds) != 0)
        return "cannot start the platform check (pipe failed)";
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        return "cannot start the platform check (fork failed)";
    if (pid == 0) {
        // The child: its own SimGrid engine, whatever it prints captured for the parent, no core dump if
        // SimGrid aborts.
        rlimit noCore {0, 0};
        ::setrlimit(RLIMIT_CORE, &noCore);
        ::dup2(pipeFds[1], 1);
        ::dup2(pipeFds[1], 2);
        ::close(pipeFds[0]);
        xbt_log_control_set("root.thresh:critical");
        int argc = 1;
        char name[] = "sgdscope-platform-check";
        char* argv[] = {name, nullptr};
        simgrid::s4u::Engine engine(&argc, argv);
        try {
            engine.load_platform(path);
            engine.seal_platform(); // needed before route_to()
            std::string why = unusableProfile(path);
            if (why.empty())
                why = unusablePart(engine, workers, server, placement, sync, async, allPairs);
            if (!why.empty()) {
                std::printf("%s\n", why.c_str());
                std::fflush(stdout);
                ::_exit(3);
            }
        } catch (const std::exception& e) {
            std::printf("%s\n", e.what());
            std::fflush(stdout);
            ::_exit(3);
        }
        ::_exit(0);
    }
    ::close(pipeFds[1]);
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0;)
        output.append(buffer, static_cast<std::size_t>(n));
    ::close(pipeFds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return {};
    // The first line that says something, without SimGrid's "[time] [category/LEVEL] " prefix.
    std::string line;
    for (std::size_t start = 0; start < output.size();) {
        const std::size_t end = std::min(output.find('\n', start), output.size());
        line = output.substr(start, end - start);
        if (!line.empty())
            break;
        start = end + 1;
    }
    // SimGrid's own "[file:line:] [category/LEVEL] " before its words.
    for (const char* level : {"/CRITICAL] ", "/ERROR] "}) {
        if (const std::size_t at = line.find(level); at != std::string::npos)
            line = line.substr(at + std::strlen(level));
    }
    while (!line.empty() && line.front() == '[') {
        const std::size_t close = line.find("] ");
        if (close == std::string::npos)
            break;
        line = line.substr(close + 2);
    }
    if (line.rfind("Cannot open file '/", 0) == 0)
        line += " (SimGrid 3.32 looks for a profile file in the platform file's folder: name it relative to that)";
    if (line.empty())
        line = WIFSIGNALED(status) ? "SimGrid stopped on signal " + std::to_string(WTERMSIG(status))
                                   : "SimGrid could not use it";
    return line.substr(0, 400);
}

} // namespace sgdscope
