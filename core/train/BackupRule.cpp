#include "core/train/BackupRule.h"

#include <algorithm>

namespace sgdscope {

int backupGradientsKept(const SyncReduction& reduction, int backupWorkers)
{
    int withSamples = 0;
    for (int w = 0; w < static_cast<int>(reduction.plan.workers.size()); ++w)
        withSamples += reduction.workerSamples(w) > 0 ? 1 : 0;
    return std::max(1, withSamples - backupWorkers);
}

DroppedGradients droppedGradients(const SyncReduction& reduction, const std::vector<char>& dropped)
{
    DroppedGradients left;
    for (std::size_t w = 0; w < dropped.size() && w < reduction.plan.workers.size(); ++w) {
        const int samples = reduction.workerSamples(static_cast<int>(w));
        if (dropped[w] && samples > 0) {
            ++left.gradients;
            left.samples += samples;
        }
    }
    return left;
}

} // namespace sgdscope
