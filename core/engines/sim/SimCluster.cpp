#include "core/engines/sim/SimCluster.h"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <cstdio>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sgdscope {

LinkFigures linkFiguresOf(ClusterKind kind)
{
    switch (kind) {
    case ClusterKind::Ideal:
        return {1e15, 0.0, true};
    case ClusterKind::Local:
        return {1e10, 0.5e-6, false}; // a memory bus: 10 GB/s per core, half a microsecond
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
           "local: hosts as fast as one core of this machine for this model (measured at start), links of 10 GB/s "
           "and 0.5 us (a memory bus); "
           "datacenter: 50 Gflop/s hosts, 10 Gb/s links, 20 us host to host through one switch; "
           "wan: 50 Gflop/s hosts, 1 Gb/s links, 30 ms host to host";
}

std::vector<std::pair<int, int>> routesNeeded(int workers, bool sync, bool async)
{
    std::vector<std::pair<int, int>> pairs;
    for (int w = 1; w < workers && sync; ++w) {
        const int parent = w - (w & -w);
        pairs.emplace_back(w, parent);
        pairs.emplace_back(parent, w);
    }
    for (int w = 0; w < workers && async; ++w) {
        pairs.emplace_back(w, workers);
        pairs.emplace_back(workers, w);
    }
    return pairs;
}

std::string checkPlatformFile(const std::string& path, int hostsNeeded, const std::vector<std::pair<int, int>>& pairs)
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
            const std::vector<simgrid::s4u::Host*> hosts = engine.get_all_hosts();
            if (static_cast<int>(hosts.size()) < hostsNeeded) {
                std::printf("it has %zu hosts, and this run needs %d\n", hosts.size(), hostsNeeded);
                std::fflush(stdout);
                ::_exit(3);
            }
            for (const auto& [a, b] : pairs) {
                std::vector<simgrid::s4u::Link*> links;
                double latency = 0.0;
                hosts[static_cast<std::size_t>(a)]->route_to(hosts[static_cast<std::size_t>(b)], links, &latency);
                if (links.empty() && latency <= 0) {
                    std::printf("there is no route from host %s to host %s\n",
                        hosts[static_cast<std::size_t>(a)]->get_cname(),
                        hosts[static_cast<std::size_t>(b)]->get_cname());
                    std::fflush(stdout);
                    ::_exit(3);
                }
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
    while (!line.empty() && line.front() == '[') {
        const std::size_t close = line.find("] ");
        if (close == std::string::npos)
            break;
        line = line.substr(close + 2);
    }
    if (line.empty())
        line = WIFSIGNALED(status) ? "SimGrid stopped on signal " + std::to_string(WTERMSIG(status))
                                   : "SimGrid could not use it";
    return line.substr(0, 300);
}

} // namespace sgdscope
