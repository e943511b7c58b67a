#include "core/metrics/WaitReading.h"

#include <algorithm>

namespace sgdscope {

WaitReading readWaits(const std::vector<WorkerBusy>& workers, double meanWait)
{
    WaitReading r;
    r.waitPerUpdate = meanWait;
    std::vector<double> perUpdate;
    for (const WorkerBusy& w : workers) {
        if (w.updates > 0)
            perUpdate.push_back(w.busySeconds / static_cast<double>(w.updates));
    }
    if (perUpdate.empty())
        return r;
    std::sort(perUpdate.begin(), perUpdate.end());
    const std::size_t n = perUpdate.size();
    r.computePerUpdate = n % 2 ? perUpdate[n / 2] : 0.5 * (perUpdate[n / 2 - 1] + perUpdate[n / 2]);
    r.busiestPerUpdate = perUpdate.back();
    r.straggler = n > 1 && r.busiestPerUpdate > WaitReading::stragglerRatio * r.computePerUpdate;
    r.overhead = n > 1 && meanWait > 0 && !r.straggler && r.computePerUpdate < WaitReading::overheadShare * meanWait;
    return r;
}

} // namespace sgdscope
