#pragma once

#include "core/nn/NetworkSpec.h"
#include "core/nn/ParameterLayout.h"
#include "core/nn/SampleView.h"
#include "core/nn/kernels/KernelTable.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

struct EvalSums
{
    double lossSum = 0.0; // sum over samples of the per-sample loss
    std::int64_t correct = 0; // classification: argmax == label
    std::int64_t samples = 0;
};

/// Forward and backward passes of a network (NetworkSpec: dense, convolution, pooling, activation and
/// flatten layers) over up to capacity() samples at once, with all buffers allocated once. One workspace per
/// worker thread: it is not thread-safe, and it allocates after construction only for a reduction tree deeper
/// than 12 levels in a network with convolutions (a batch of more than about 4,000 chunks).
///
/// Numerics (core/nn/kernels/KernelsImpl.h and ConvKernelsImpl.h have the order of every operation): each
/// sample's forward and backward values depend on that sample and the parameters only, not on which other
/// samples share the pass; the weight and bias gradients are sums over samples that follow a tree program
/// (ReductionPlan's fixed tree: a chain in sample order per chunk, then left + right). So a chunk's gradient is
/// the same bits whichever pass, worker, thread or instruction-set path computes it, which every engine's sync
/// builds on.
///
/// Values between layers: a vector is stored sample-major (a sample's values contiguous), each row followed by a
/// 1 (the bias column of the next product) and padded; an image channel-major over the pass (channel c holds the
/// pass's samples' images back to back, as the convolution kernels read them). Activation layers work in place.
class NetworkWorkspace
{
public:
    NetworkWorkspace(const NetworkSpec& spec, int capacity);

    int capacity() const { return m_capacity; }

    /// One pass over samples indices[0..n) (n in 1..capacity()): forward, loss and backward, with every
    /// per-sample loss gradient scaled by `scale`; the weight and bias gradients are summed as `program` says
    /// into the stack entries stack[0..max(stackIn, stackOut)) (gradient vectors in the padded layout; the
    /// program's stackIn entries are read, its stackOut entries written). Each sample's loss is then in
    /// sampleLoss()[0..n).
    void pass(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
        const std::uint32_t* indices, int n, float scale, const kernels::TreeProgram& program, float* const* stack);
    /// Per-sample losses of the last pass (double; the sum over outputs of the squared errors, or the
    /// cross-entropy).
    const double* sampleLoss() const { return m_sampleLoss.data(); }

    /// The gradient of one chunk, samples indices[0..n) summed in order:
    ///   grad = scale * sum over the n samples of d(loss_i)/d(params)
    /// into `grad` (the padded layout; padding untouched). Returns the sum of the n per-sample losses (in
    /// order). n must be in 1..capacity().
    double gradient(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
        const std::uint32_t* indices, int n, float scale, float* grad);

    /// Loss (and correct predictions) of samples [first, first + n) without a backward pass; any n >= 1
    /// (processed in pieces of capacity()); per-sample losses added in order.
    EvalSums evaluate(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
        std::int64_t first, std::int64_t n);

    /// Output j of sample i of the last forward pass.
    float output(int sample, int j) const;

private:
    /// The values between two layers: a vector (row stride `ld`) or an image (channel stride `ld`).
    struct Tensor
    {
        TensorShape shape;
        std::ptrdiff_t ld = 0;
        AlignedVector<float> values;
    };

    void gather(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first, int n);
    void forward(const kernels::KernelTable& k, const ParameterLayout& layout, const float* params, int n);
    void lossAndDelta(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first, int n,
        float scale, bool wantDelta, std::int64_t* correct);
    kernels::ConvGeometry convGeometry(std::size_t layer, int n) const;

    NetworkSpec m_spec;
    int m_capacity = 0;
    std::vector<Tensor> m_tensors; // m_tensors[0]: the input (an image if the network reshapes it first)
    std::vector<int> m_input; // per layer: the tensor it reads
    std::vector<int> m_output; // per layer: the tensor it writes (its input for in-place layers)
    std::vector<int> m_weighted; // per layer: its index among the weighted layers (-1 if none)
    std::size_t m_firstWeighted = 0; // no gradient below this layer's input is needed
    AlignedVector<float> m_delta[2]; // d(loss)/d(values) of a tensor, in its layout
    AlignedVector<float> m_pack; // packed weight panels
    AlignedVector<float> m_slots; // the tree's stack entries of one tile
    AlignedVector<float> m_convScratch; // a convolution kernel's: a padded sample, repacked weights, the tree's entries
    int m_convScratchDepth = 0; // the deepest tree program m_convScratch has room for
    std::vector<double> m_sampleLoss;
    std::vector<float*> m_weights; // per stack entry, per call: where the layer's gradient goes
    std::vector<float*> m_biases;
};

} // namespace sgdscope
