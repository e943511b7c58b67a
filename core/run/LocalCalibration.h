#pragma once

#include "core/metrics/Events.h"
#include "core/train/Problem.h"
#include "core/train/TrainerSettings.h"

#include <memory>

namespace sgdscope {

/// The speed of one worker of this machine on this model, in flop/s, for the simulated `local` cluster: the
/// threads engine itself runs the mode with these settings (min(P, this machine's threads) workers, fresh
/// batches, parameters that change, its copies, applies and waits; no straggler or jitter) for about `seconds`
/// after `warmUpSeconds`, and a
/// worker's speed is the model's flops of a step divided by the median time of its compute spans. So the
/// simulated workers compute as fast as this machine's workers do, caches, contention between the cores and
/// all.
double measureLocalHostFlops(std::shared_ptr<const Problem> problem, const TrainerSettings& settings, Mode mode,
    double seconds = 0.4, double warmUpSeconds = 0.6);

} // namespace sgdscope
