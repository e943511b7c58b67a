#pragma once

#include "core/train/ChunkGradients.h"

#include <vector>

namespace sgdscope {

// Sync with backup workers (Chen, Pan, Monga, Bengio, Jozefowicz 2016, "Revisiting Distributed Synchronous SGD"):
// the rule every engine keeps, each supplying only the order in which its workers' gradients arrive. An update
// applies the gradients of the first P - B workers to arrive among those with samples (a worker without chunks
// takes no part in the count), at least one, and drops the others; SyncReduction adds the kept ones in the fixed
// tree (keptLossSum, combineKept, applyKept). With B = 0 nothing is dropped: sync, bit for bit.

/// How many gradients an update of `reduction`'s plan keeps when `backupWorkers` (B) may be left out.
int backupGradientsKept(const SyncReduction& reduction, int backupWorkers);

/// What an update left out, as UpdateEvent reports it: the dropped workers (`dropped[w]`) that had samples, and
/// their samples.
struct DroppedGradients
{
    int gradients = 0;
    int samples = 0;
};
DroppedGradients droppedGradients(const SyncReduction& reduction, const std::vector<char>& dropped);

} // namespace sgdscope
