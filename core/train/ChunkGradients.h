#pragma once

#include "core/nn/NetworkWorkspace.h"
#include "core/nn/ParameterLayout.h"
#include "core/nn/SampleView.h"
#include "core/train/ReductionPlan.h"
#include "core/train/UpdateRule.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

/// dst[i] += src[i] for i in [first, last): one node of the fixed reduction tree (or a piece of it).
void addGradient(float* dst, const float* src, std::size_t first, std::size_t last);

/// Computes one worker's part of a batch as its plan says (ReductionPlan): its run of chunks as K
/// micro-batches in a row, in passes, every chunk's gradient (scaled by `scale`) and every tree node inside
/// the run summed by the kernels; the run's subtrees end in its stack buffers (WorkerReduction::roots).
/// `batchIndices` are the sample indices of the whole batch the chunks cut. Writes the sum of the per-sample
/// losses of chunk c (in sample order) to chunkLoss[c]. Returns the number of samples computed.
///
/// Every engine computes gradients through this one function, so a chunk's gradient is the same bits wherever
/// and whenever it is computed.
int computeWorkerPart(NetworkWorkspace& workspace, const ParameterLayout& layout, const float* params,
    const SampleView<float>& data, const std::uint32_t* batchIndices, const WorkerReduction& part, float scale,
    std::vector<ParamVector>& buffers, double* chunkLoss);

/// What a sync update reduces over for the current settings: the chunk layout, the plan (who computes and
/// adds which chunks), the gradient buffers and each chunk's loss. Every engine's sync keeps one.
struct SyncReduction
{
    ChunkLayout chunks;
    ReductionPlan plan;
    std::vector<ParamVector> buffers;
    std::vector<double> chunkLoss;

    /// Rebuilds for a batch, chunk size, worker count, micro-batches and pass size (nothing to do if they are
    /// the same as before); returns whether it rebuilt.
    bool prepare(int batch, int chunkSize, int workers, int accum, int passSamples, std::size_t parameterCount);

    /// The samples of worker w's chunks (0 for a worker without chunks).
    int workerSamples(int worker) const;

    /// Backup's update (and sync's, with nothing dropped): which workers' gradients are left out (dropped[w]).
    /// The sum of the kept workers' chunk losses in chunk order, and their samples.
    double keptLossSum(const std::vector<char>& dropped) const;
    int keptSamples(const std::vector<char>& dropped) const;
    /// On elements [first, last): the dropped workers' subtrees set to zero, the plan's combine, and the root
    /// scaled by `scale` unless it is 1 (batch / kept samples: the mean over the kept samples). With nothing
    /// dropped it is the plain combine, bit for bit.
    float* combineKept(const std::vector<char>& dropped, float scale, std::size_t first, std::size_t last);
    /// A whole update where one node combines and applies (the simulated cluster's and MPI's sync and backup): the
    /// kept workers' mean loss, and, if it is finite, the combine of their gradients (combineKept) applied block by
    /// block with `rule` to `params` and `velocity`. With nothing dropped it is sync's update, in sync's order of
    /// operations. Returns the loss (not finite: nothing applied).
    double applyKept(const std::vector<char>& dropped, const MomentumSgd& rule, float lr, float* params,
        float* velocity, std::size_t size);
    /// The scale of combineKept for these kept samples.
    float keptScale(int keptSamples) const
    {
        return keptSamples == chunks.batch ? 1.0f : static_cast<float>(static_cast<double>(chunks.batch) / keptSamples);
    }

private:
    int m_workers = 0;
    int m_accum = 0;
    int m_passSamples = 0;
};

/// The gradient of one worker's own samples (an async-like push's slice of a batch, a local SGD step's): the samples
/// as a fixed chunk tree of their own (one worker, K micro-batches, chunks of the run's chunk size cut to the
/// samples), scaled to their mean. Every engine's async-like modes and local SGD compute it through this, so a push
/// is the same bits wherever it is computed.
struct SliceReduction
{
    ChunkLayout chunks;
    ReductionPlan plan;
    std::vector<ParamVector> buffers; // its own (ensureBuffers); a caller may lend scratch instead
    std::vector<double> chunkLoss;

    /// Plans for `samples` samples (nothing to do if that is the plan already); returns whether it rebuilt.
    bool prepare(int samples, int chunkSize, int accum, int passSamples);
    /// Gives it its own buffers for the plan, of `parameterCount` floats each.
    void ensureBuffers(std::size_t parameterCount);
    int samples() const { return chunks.batch; }

    /// The gradient at `params` of the samples `indices` (as many as prepared for) into `into` (the gradient ends in
    /// into[plan.rootBuffer]); returns the sum of the samples' losses, in chunk order.
    double compute(NetworkWorkspace& workspace, const ParameterLayout& layout, const float* params,
        const SampleView<float>& data, const std::uint32_t* indices, std::vector<ParamVector>& into);
    /// The same into its own buffers: gradient() then holds it.
    double compute(NetworkWorkspace& workspace, const ParameterLayout& layout, const float* params,
        const SampleView<float>& data, const std::uint32_t* indices)
    {
        return compute(workspace, layout, params, data, indices, buffers);
    }
    float* gradient() { return buffers[static_cast<std::size_t>(plan.rootBuffer)].data(); }

private:
    int m_accum = 0;
    int m_passSamples = 0;
};

} // namespace sgdscope
