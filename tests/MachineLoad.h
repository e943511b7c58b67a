#pragma once
// What the operating system took from the processes a timing test times: the kernel's run-queue delay (the time a
// thread was runnable but waited for a CPU, /proc/PID/task/*/schedstat). A test that times real threads or processes
// either bounds what it measures by this (its claim then holds under any load and can still fail), or states it as
// the measured reason when it skips (tests/STYLE: "holds under load or measures its premise"). summary.json gives the
// same figure for a run's own process (runs[i].process_cpu) and for every MPI rank (mpi.ranks).

#include "core/common/Json.h"

#include <QString>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace sgdscope::testing {

/// Every thread's run-queue delay in process `pid` ("self" for this one), seconds by thread id; nullopt where the
/// kernel keeps no such figure or the process is gone.
inline std::optional<std::map<std::string, double>> runQueueWaits(const std::string& pid = "self")
{
    std::map<std::string, double> waits;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + pid + "/task", ec)) {
        std::ifstream in(task.path() / "schedstat");
        unsigned long long onCpu = 0;
        unsigned long long waiting = 0;
        if (in >> onCpu >> waiting)
            waits[task.path().filename().string()] = static_cast<double>(waiting) * 1e-9;
        else if (std::filesystem::exists(task.path()))
            return std::nullopt; // no schedstat in this kernel
    }
    if (ec || waits.empty())
        return std::nullopt;
    return waits;
}

/// The processes whose parent is `pid` (from /proc/PID/stat).
inline std::vector<long> childrenOf(long pid)
{
    std::vector<long> children;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const std::size_t close = line.rfind(')'); // (the command's name may hold spaces and parentheses)
        if (close == std::string::npos || close + 2 >= line.size())
            continue;
        std::istringstream rest(line.substr(close + 2));
        char state = 0;
        long parent = 0;
        if (rest >> state >> parent && parent == pid)
            children.push_back(std::stol(name));
    }
    return children;
}

/// Holds another process's address space to what it uses now (RLIMIT_AS at its VmSize), so that its next growth
/// fails as under `ulimit -v` (new throws std::bad_alloc). Returns what went wrong, or nothing.
inline std::string holdAddressSpaceToWhatItUses(long pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    long long vmKb = -1;
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmSize:", 0) == 0)
            vmKb = std::stoll(line.substr(7));
    if (vmKb <= 0)
        return "no VmSize for process " + std::to_string(pid);
    const rlimit limit {static_cast<rlim_t>(vmKb) * 1024, static_cast<rlim_t>(vmKb) * 1024};
    if (::prlimit(static_cast<pid_t>(pid), RLIMIT_AS, &limit, nullptr) != 0)
        return std::string("prlimit: ") + std::strerror(errno);
    return {};
}

/// The run-queue delay of a process's threads since construction: the longest any one thread waited, and the sum
/// over its threads. Threads that end meanwhile are left out; for another process, call sample() while it runs
/// (the last sample before it ends is what it took). Where the kernel keeps no such figure: 0, and known() is false.
class RunQueueDelay
{
public:
    explicit RunQueueDelay(std::string pid = "self")
        : m_pid(std::move(pid))
        , m_start(runQueueWaits(m_pid))
    {
        m_last = m_start;
    }
    /// Reads the process's figures now (a process that ended keeps its last sample).
    void sample()
    {
        if (auto now = runQueueWaits(m_pid))
            m_last = std::move(now);
    }
    bool known() const { return m_start && m_last; }
    /// The longest time one of its threads waited for a CPU since construction (as of the last sample).
    double longestSeconds() const
    {
        double longest = 0.0;
        forEach([&](double waited) { longest = std::max(longest, waited); });
        return longest;
    }
    /// The sum over its threads.
    double totalSeconds() const
    {
        double total = 0.0;
        forEach([&](double waited) { total += waited; });
        return total;
    }

private:
    template<typename F>
    void forEach(F&& f) const
    {
        if (!known())
            return;
        for (const auto& [task, wait] : *m_last) {
            const auto before = m_start->find(task);
            f(wait - (before == m_start->end() ? 0.0 : before->second));
        }
    }
    std::string m_pid;
    std::optional<std::map<std::string, double>> m_start;
    std::optional<std::map<std::string, double>> m_last;
};

/// What summary.json says an MPI rank's threads waited for a core while they served `mode` (0 if not said).
inline double rankWaitedForACore(const Json& summary, const char* mode, int rank)
{
    const Json* mpi = member(summary, "mpi");
    const Json* ranks = mpi ? member(*mpi, "ranks") : nullptr;
    const Json* rows = ranks ? member(*ranks, mode) : nullptr;
    if (!rows || !rows->is_array())
        return 0.0;
    for (const Json& row : *rows) {
        if (row.value("rank", -1) == rank && row.contains("waited_for_a_core_seconds")
            && row.at("waited_for_a_core_seconds").is_number())
            return row.at("waited_for_a_core_seconds").get<double>();
    }
    return 0.0;
}

/// "rank 0 waited 0.12 s for a core, rank 1 0.3 s, ..." for messages.
inline QString rankWaitsText(const Json& summary, const char* mode, int ranks)
{
    QString text;
    for (int r = 0; r < ranks; ++r)
        text += QStringLiteral("%1rank %2 %3 s")
                    .arg(r ? QStringLiteral(", ") : QString())
                    .arg(r)
                    .arg(rankWaitedForACore(summary, mode, r), 0, 'f', 3);
    return QStringLiteral("waited for a core: ") + text;
}

} // namespace sgdscope::testing
