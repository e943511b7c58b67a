#pragma once

#include "core/data/DataOrder.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/nn/ParameterLayout.h"
#include "core/train/ChunkGradients.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace sgdscope {

/// Local SGD's round: H local steps (`localSteps`, TrainerSettings::localSteps), or the steps the sample budget has
/// left (`stepsLeft`, at least one) if fewer: the run's last round.
int localRoundSteps(int localSteps, std::int64_t stepsLeft);

/// The losses of a round's samples: their sum and how many, added up worker by worker in worker order (a fixed
/// order, so every engine reports the same loss).
struct RoundLoss
{
    double sum = 0.0;
    int samples = 0;

    void add(const RoundLoss& worker)
    {
        sum += worker.sum;
        samples += worker.samples;
    }
    /// The round's loss: the mean loss per sample of the round (0 for a round without samples). Not finite: the
    /// round diverged, and its models are not averaged.
    double mean() const { return samples > 0 ? sum / samples : 0.0; }
    bool diverged() const { return !std::isfinite(mean()); }
};

/// What an engine does around each of a worker's local steps (LocalSgdModels::localSteps): its clock and its
/// straggler's delay. Called on the thread that computes the worker's steps; the defaults do nothing (the simulated
/// cluster charges the time of the steps apart from their math).
class LocalStepHooks
{
public:
    virtual ~LocalStepHooks() = default;
    /// Before the gradient of step `step`.
    virtual void computing(int /*step*/) { }
    /// After the gradient of step `step`, of `samples` samples, before its loss is looked at (a straggler is slow
    /// whatever its loss).
    virtual void computed(int /*step*/, int /*samples*/) { }
    /// Around the apply of step `step` to the worker's model.
    virtual void applying(int /*step*/) { }
    virtual void applied(int /*step*/) { }
};

/// Local SGD's math (Lin, Stich, Patel, Jaggi 2018, "Don't Use Large Mini-Batches, Use Local SGD"; PyTorch's
/// PostLocalSGD), the same on every engine: one model per worker with its own momentum; a round of H local steps
/// takes the next H global batches, and a worker's step h computes the gradient of its slice of batch h (the slice
/// sync and async give it, as K micro-batches in the chunk tree of its slice) on its model and applies it there; the
/// average weighs each model by its slice's samples and adds them in worker order 0, 1, ..., P - 1, element by
/// element, and every model goes on from it. Momentum stays each worker's own (as PostLocalSGD's local optimizers).
/// The round's loss is the mean loss per sample of its steps (RoundLoss); a round whose loss is not finite is not
/// averaged.
///
/// An engine supplies only where each worker's steps run and how the workers meet for the average: the threads
/// engine's team averages a share of the elements each, an MPI job's ranks send their models to rank 0, the
/// simulated cluster averages here and charges the messages in virtual time.
class LocalSgdModels
{
public:
    /// Every worker's slice of a batch of `batch` and a copy of `params` (its momentum kept if it had one).
    /// `computing`: the one worker whose steps are computed here (an MPI rank's; the others' models are only
    /// averaged), or -1 for all.
    void prepare(
        int workers, int batch, int chunk, int accum, int passSamples, const ParamVector& params, int computing = -1);
    int workers() const { return static_cast<int>(m_models.size()); }
    int sliceSamples(int worker) const { return m_models[static_cast<std::size_t>(worker)].slice.size(); }
    /// Worker w's model (its parameters), to send it or receive it elsewhere.
    float* model(int worker) { return m_models[static_cast<std::size_t>(worker)].params.data(); }

    /// Starts a round of `steps` local steps (localRoundSteps): takes its batches, the next `steps` batches of
    /// `batch` samples from `cursor` (every process computing a worker takes them from its own copy of the order).
    void startRound(BatchCursor& cursor, int steps, int batch);
    int roundSteps() const { return m_roundSteps; }
    /// Worker w's local steps of the round on its model, each applied with its momentum (`rule`) at the rate of a
    /// batch `rate` gives step h of a round that starts after `samplesDone` samples (samplesDone + h x batch); after a
    /// step whose loss is not finite it takes no more (the round diverged). Returns its samples' losses. Workers' steps
    /// may run at once on different threads, each with its own workspace.
    RoundLoss localSteps(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
        const SampleView<float>& data, const MomentumSgd& rule, const LearningRateRule& rate, std::int64_t samplesDone,
        LocalStepHooks& hooks);
    RoundLoss localSteps(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
        const SampleView<float>& data, const MomentumSgd& rule, const LearningRateRule& rate, std::int64_t samplesDone);

    /// Elements [first, last): the weighted average into `params` and every model; adds each model's squared
    /// distance from the average to spread[o] (o: the worker). Shares of the elements may be averaged at once.
    void average(float* params, std::size_t first, std::size_t last, double* spread);
    /// Every element at once (average over the whole): returns the models' mean distance from the average.
    double averageAll(float* params);
    /// The models' mean distance from their average (UpdateEvent::modelSpread), from each model's squared distance
    /// as average() adds them up (`squares[o]`, o: the worker; in worker order).
    static double meanDistance(const double* squares, int workers);

private:
    struct Model
    {
        IndexRange slice;
        SliceReduction reduction; // of its step
        ParamVector params;
        ParamVector velocity;
    };
    std::vector<Model> m_models;
    std::vector<float> m_weights;
    std::vector<std::uint32_t> m_roundIndices; // the round's batches, one after another
    int m_roundSteps = 0;
    int m_roundBatch = 0;
    std::vector<double> m_squares; // averageAll's
};

} // namespace sgdscope
