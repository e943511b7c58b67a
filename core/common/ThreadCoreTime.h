#pragma once

// Plain POSIX and the C++ library only: the MPI probe (app/MpiProbe.cpp), which links nothing of sgdscope, uses it
// too.
#include <dirent.h>

#include <cstdio>
#include <string>
#include <utility>

namespace sgdscope {

/// This process's threads, summed: (seconds on a core, seconds runnable but waiting for one) from
/// /proc/self/task/*/schedstat, or (-1, -1) where the kernel does not say.
inline std::pair<double, double> coreTimeOfThisProcess()
{
    DIR* tasks = ::opendir("/proc/self/task");
    if (!tasks)
        return {-1.0, -1.0};
    double running = 0.0;
    double waiting = 0.0;
    bool any = false;
    while (const dirent* task = ::readdir(tasks)) {
        if (task->d_name[0] == '.')
            continue;
        const std::string path = std::string("/proc/self/task/") + task->d_name + "/schedstat";
        if (std::FILE* f = std::fopen(path.c_str(), "r")) {
            unsigned long long run = 0;
            unsigned long long wait = 0;
            if (std::fscanf(f, "%llu %llu", &run, &wait) == 2) {
                running += 1e-9 * static_cast<double>(run);
                waiting += 1e-9 * static_cast<double>(wait);
                any = true;
            }
            std::fclose(f);
        }
    }
    ::closedir(tasks);
    return any ? std::pair {running, waiting} : std::pair {-1.0, -1.0};
}

} // namespace sgdscope
