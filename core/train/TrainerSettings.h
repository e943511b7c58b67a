#pragma once

#include "core/common/NamedValues.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace sgdscope {

/// Worker `worker` is `factor` times slower: after computing, it sleeps (factor - 1) x its measured compute
/// time, as a slow remote machine would be slow without using our cores. (The last 80 us of a delay are
/// waited out on the clock instead: a sleep cannot end that precisely.)
struct Straggler
{
    int worker = 0;
    double factor = 1.0;
};

enum class AsyncApply
{
    Lock,
    LockFree
};
enum class AsyncLearningRate
{
    Constant,
    Staleness
};
inline constexpr NameTable<AsyncApply, 2> asyncApplyNames {
    {{"lock", AsyncApply::Lock}, {"lockfree", AsyncApply::LockFree}}};
inline constexpr NameTable<AsyncLearningRate, 2> asyncLearningRateNames {
    {{"constant", AsyncLearningRate::Constant}, {"staleness", AsyncLearningRate::Staleness}}};

/// Everything a trainer needs besides the problem. The window may change workers, batch, accum, lr,
/// stragglers, jitter and the modes' knobs (S, B, H, lambda) between updates (see Trainer::reconfigure).
struct TrainerSettings
{
    int workers = 1;
    int batch = 1;
    int accum = 1;
    int chunk = 0; // samples per chunk of the fixed reduction; 0 = defaultChunkSize(batch)
    double learningRate = 0.01;
    double momentum = 0.0;
    std::uint64_t seed = 0;
    /// Samples to train on: sync stops after budget / batch updates, async after the same number of samples.
    std::int64_t sampleBudget = std::numeric_limits<std::int64_t>::max();
    /// Whole-training-set loss every this many samples (0: only at the end).
    std::int64_t evalEverySamples = 0;
    std::vector<Straggler> stragglers;
    double slowFraction = 0.0; // this fraction of the workers (a seeded choice) is slowFractionFactor times slower
    double slowFractionFactor = 1.0;
    double rotatingFactor = 1.0; // each step one worker (a seeded draw per step) is this many times slower
    double jitter = 0.0; // sigma of the log-normal compute-time factor
    double heavyTail = 0.0; // > 0: a Pareto compute-time factor of this shape (its tail is heavy for shape < 2)
    std::int64_t sspBound = 3; // ssp: a worker starts its push n + 1 only when every worker has n - S applied
    int backupWorkers = 1; // backup: each update applies the first workers - backupWorkers gradients to arrive
    int localSteps = 8; // local-sgd: local steps between averagings
    double dcLambda = 0.04; // dc-asgd: the compensation's lambda (0: none, exactly async)
    bool dcAdaptive = false; // dc-asgd: lambda / sqrt(mean square of the gradient + 1e-7), moving average 0.95
    AsyncApply asyncApply = AsyncApply::Lock;
    AsyncLearningRate asyncLearningRate = AsyncLearningRate::Constant;
    /// Time to target (as DAWNBench reports it): the first whole-set evaluation with test accuracy at least
    /// targetAccuracy, or training-set loss at most targetLoss, is recorded (and ends the run when
    /// stopAtTarget). Negative: no target.
    double targetAccuracy = -1.0;
    double targetLoss = -1.0;
    bool stopAtTarget = true;
};

} // namespace sgdscope
