#include "core/MemoryBudget.h"

#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

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

double modelMemoryBytes(const MlpSpec& spec, const TrainerSettings& settings, int chunkSize)
{
    double params = 0.0;
    double widths = 0.0;
    double widest = 0.0;
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double in = spec.layers[static_cast<std::size_t>(l)];
        const double out = spec.layers[static_cast<std::size_t>(l) + 1];
        params += in * out + out + 32; // with alignment padding
    }
    for (const int w : spec.layers) {
        widths += w;
        widest = std::max(widest, static_cast<double>(w));
    }
    const double p = std::max(1, settings.workers);
    const double chunk = std::max(1, chunkSize);
    const double chunks = std::ceil(std::max(1, settings.batch) / chunk);
    const double treeDepth = std::ceil(std::log2(std::max(2.0, chunks))) + 1;
    const double reductionBuffers = std::min(chunks, p * treeDepth) + 1;
    const double workspace = (widths + 3 * widest) * chunk + (widths + 3 * widest) * 256; // training + evaluation
    const double sync = params * (3 + reductionBuffers) + p * workspace;
    const double async = params * (1 + p * (2 + treeDepth)) + p * workspace;
    return 4.0 * (sync + async + 2 * params);
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
