#include "core/common/MemoryBudget.h"

#include "core/common/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

namespace sgdscope {

double availableMemoryBytes()
{
    double bytes = 0.0;
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double value = 0.0;
    std::string unit;
    while (meminfo >> key >> value >> unit) {
        if (key == "MemAvailable:") {
            bytes = value * 1024.0;
            break;
        }
    }
    if (bytes <= 0)
        bytes = static_cast<double>(::sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    if (const char* limit = std::getenv("SGDSCOPE_MEMORY_LIMIT_MB"); limit && *limit)
        bytes = std::min(bytes, std::atof(limit) * 1024.0 * 1024.0);
    return bytes;
}

namespace {
double statusBytes(const std::string& field)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(field, 0) == 0) {
            double kB = -1.0;
            if (std::sscanf(line.c_str() + field.size(), "%lf", &kB) == 1 && kB >= 0)
                return kB * 1024.0;
        }
    }
    return -1.0;
}
} // namespace

double residentBytes()
{
    return statusBytes("VmRSS:");
}

double peakResidentBytes()
{
    return statusBytes("VmHWM:");
}

double largestChildPeakBytes()
{
    rusage usage {};
    if (::getrusage(RUSAGE_CHILDREN, &usage) != 0)
        return 0.0;
    return static_cast<double>(usage.ru_maxrss) * 1024.0; // kilobytes on Linux
}

std::string formatBytes(double bytes)
{
    char buffer[64];
    if (bytes >= 1e9)
        std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        std::snprintf(buffer, sizeof buffer, "%.0f MB", bytes / 1e6);
    else
        std::snprintf(buffer, sizeof buffer, "%.0f kB", std::max(1.0, bytes / 1e3));
    return buffer;
}

void requireMemory(double bytes, const std::string& option, const std::string& what, const std::string& advice)
{
    const double available = availableMemoryBytes();
    if (bytes <= 0.9 * available)
        return;
    throw SgdError(option + ": " + what + " needs about " + formatBytes(bytes) + "; this machine has "
        + formatBytes(available) + " available. " + advice);
}

} // namespace sgdscope
