#pragma once

#include "core/nn/NetworkWorkspace.h"
#include "core/nn/ParameterLayout.h"
#include "core/train/ChunkGradients.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

/// Local SGD's math (Lin, Stich, Patel, Jaggi 2018, "Don't Use Large Mini-Batches, Use Local SGD"; PyTorch's
/// PostLocalSGD), the same on every engine: one model per worker with its own momentum; a local step computes the
/// gradient of the worker's slice of a batch (the slice sync and async give it, as K micro-batches in the chunk
/// tree of its slice) on its model and applies it there; the average weighs each model by its slice's samples and
/// adds them in worker order 0, 1, ..., P - 1, element by element, and every model goes on from it. Momentum stays
/// each worker's own (as PostLocalSGD's local optimizers).
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

    /// Worker w's gradient on its model, of its slice of the batch `batchIndices`; returns the sum of the
    /// samples' losses (the samples: sliceSamples).
    double computeGradient(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
        const SampleView<float>& data, const std::uint32_t* batchIndices);
    /// Applies worker w's last gradient to its model with its momentum.
    void applyStep(int worker, const MomentumSgd& rule, float lr);
    /// Elements [first, last): the weighted average into `params` and every model; adds each model's squared
    /// distance from the average to spread[o] (o: the worker).
    void average(float* params, std::size_t first, std::size_t last, double* spread);
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
};

} // namespace sgdscope
