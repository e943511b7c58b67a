#pragma once

#include <cstdint>
#include <string>

namespace sgdscope {

/// Memory the system can still give this process (MemAvailable of /proc/meminfo). The environment
/// variable SGDSCOPE_MEMORY_LIMIT_MB, when set, caps it (to try the refusals on a big machine).
double availableMemoryBytes();

/// This process's resident memory now (VmRSS of /proc/self/status) and at its peak so far (VmHWM), in bytes; -1
/// where the kernel does not say.
double residentBytes();
double peakResidentBytes();
/// The largest peak resident memory of this process's children that have ended and been waited for (getrusage's
/// RUSAGE_CHILDREN), in bytes; 0 if none.
double largestChildPeakBytes();

/// "1.5 GB", "120 MB", "12 kB".
std::string formatBytes(double bytes);

/// Throws SgdError "<option>: <what> needs X; this machine has Y available. <advice>" if bytes do not fit
/// in 90% of what is available.
void requireMemory(double bytes, const std::string& option, const std::string& what, const std::string& advice);

} // namespace sgdscope
