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
/// The learning rate a push applied on its own takes (async, ssp, dc-asgd). The learning rate is given for a batch of
/// B samples; a push is the mean gradient of its own b samples (B / P of them).
enum class AsyncLearningRate
{
    Scaled, // lr x b / B: every mode takes the same step per sample (the linear scaling rule read the other way)
    Constant, // lr: P times sync's step per sample at P workers
    Staleness, // lr x b / B / max(1, staleness) (Zhang, Gupta, Lian, Liu 2016)
};
/// How the learning rate changes over a run of N samples (TrainerSettings::sampleBudget): constant, or linear, lr x
/// (1 - s / N) for an update applied after s samples (a linear decay to 0 at the run's end, as Goyal et al. 2017's
/// and the "linear" schedules of common trainers). The learning rate of a push (AsyncLearningRate) scales the scheduled
/// one. A run with no sample budget (the window's, which trains until stopped) keeps the constant rate.
enum class LrSchedule
{
    Constant,
    Linear,
};
inline constexpr NameTable<LrSchedule, 2> lrScheduleNames {
    {{"constant", LrSchedule::Constant}, {"linear", LrSchedule::Linear}}};
inline constexpr NameTable<AsyncApply, 2> asyncApplyNames {
    {{"lock", AsyncApply::Lock}, {"lockfree", AsyncApply::LockFree}}};
inline constexpr NameTable<AsyncLearningRate, 3> asyncLearningRateNames {{{"scaled", AsyncLearningRate::Scaled},
    {"constant", AsyncLearningRate::Constant}, {"staleness", AsyncLearningRate::Staleness}}};

/// The wires of the team-wide modes (sync, backup, local-sgd) between processes or simulated hosts: who sends what
/// to whom. It decides only time: every topology sums the same fixed chunk tree in the same order (the bits do not
/// change with it). The modes that push one by one always talk to a parameter server.
enum class Topology
{
    ParameterServer, // every worker sends to one server, which applies the update and sends the parameters back
    Tree, // a binomial tree: gradients summed up it, the parameters sent down it
    AllReduce, // reduce-scatter, then all-gather (NCCL, Horovod): each rank sends 2 (P - 1) / P of the parameters
};
inline constexpr NameTable<Topology, 3> topologyNames {
    {{"ps", Topology::ParameterServer}, {"tree", Topology::Tree}, {"allreduce", Topology::AllReduce}}};

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
    AsyncLearningRate asyncLearningRate = AsyncLearningRate::Scaled;
    LrSchedule lrSchedule = LrSchedule::Constant;
    Topology topology = Topology::ParameterServer; // the team-wide modes' wires (simulated cluster, MPI)
    /// Time to target (as DAWNBench reports it): the first whole-set evaluation with test accuracy at least
    /// targetAccuracy, or training-set loss at most targetLoss, is recorded (and ends the run when
    /// stopAtTarget). Negative: no target.
    double targetAccuracy = -1.0;
    double targetLoss = -1.0;
    bool stopAtTarget = true;
};

} // namespace sgdscope
