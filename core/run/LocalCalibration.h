#pragma once

#include "core/engines/sim/SimCluster.h"
#include "core/metrics/Events.h"
#include "core/train/Problem.h"
#include "core/train/TrainerSettings.h"

#include <memory>

namespace sgdscope {

/// Measures this machine for the simulated `local` cluster. A worker's speed: the threads engine itself runs
/// the mode with these settings (min(P, this machine's threads) workers, fresh batches, parameters that change,
/// its copies, applies and waits; no straggler or jitter) for about `seconds` after `warmUpSeconds`, and a
/// worker's speed is the model's flops of a sample divided by the median seconds per sample of its compute
/// spans. So the simulated workers compute as fast as this machine's workers do, caches, contention between the
/// cores and all. The memory bandwidth: copies of a buffer of the parameters' size (as applies and copies see
/// it, in cache or not). And the share of the time its threads waited for a core (the kernel's run-queue delay,
/// /proc/self/task/*/schedstat), with the spread of the spans: LocalCalibration::busy() says the figures describe
/// a loaded machine.
LocalCalibration calibrateLocalCluster(std::shared_ptr<const Problem> problem, const TrainerSettings& settings,
    Mode mode, double seconds = 0.4, double warmUpSeconds = 0.6);

} // namespace sgdscope
