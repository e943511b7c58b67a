#pragma once

#include "core/data/SampleView.h"
#include "core/nn/ParameterLayout.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

struct EvalSums
{
    double lossSum = 0.0; // sum over samples of the per-sample loss
    std::int64_t correct = 0; // classification: argmax == label
    std::int64_t samples = 0;
};

/// Forward and backward passes of an MLP over a chunk of samples, with all buffers allocated once.
/// One workspace per worker thread: it is not thread-safe, and it never allocates after construction.
///
/// Determinism: for the same parameters, samples and chunk size, gradient() returns the same bits on any
/// thread and any workspace (the buffers are equally aligned and Eigen runs single-threaded here), which
/// is what the sync trainer's fixed reduction tree builds on.
template<typename Scalar>
class MlpWorkspace
{
public:
    MlpWorkspace(const MlpSpec& spec, int capacity);

    int capacity() const { return m_capacity; }

    /// Gathers samples indices[0..n) from `data`, runs forward and backward and writes
    ///   grad = scale * sum over the n samples of d(loss_i)/d(params)
    /// into `grad` (the padded layout; padding untouched). Returns the sum of the n per-sample losses.
    /// n must be in 1..capacity().
    double gradient(const ParameterLayout& layout, const Scalar* params, const SampleView<Scalar>& data,
        const std::uint32_t* indices, int n, Scalar scale, Scalar* grad);

    /// Loss (and correct predictions) of samples [first, first + n) without a backward pass; any n >= 1
    /// (processed in pieces of capacity()).
    EvalSums evaluate(const ParameterLayout& layout, const Scalar* params, const SampleView<Scalar>& data,
        std::int64_t first, std::int64_t n);

    /// The outputs of the last forward pass (row-major outputs x n: feature-major), for tests.
    const Scalar* outputs() const { return m_act.back().data(); }

private:
    void gather(const SampleView<Scalar>& data, const std::uint32_t* indices, std::int64_t first, int n);
    void forward(const ParameterLayout& layout, const Scalar* params, int n);
    double lossAndDelta(const SampleView<Scalar>& data, const std::uint32_t* indices, std::int64_t first, int n,
        Scalar scale, bool wantDelta, std::int64_t* correct);

    MlpSpec m_spec;
    int m_capacity = 0;
    std::vector<AlignedVector<Scalar>> m_act; // m_act[l]: layer l's activations, feature-major (layers[l] x n)
    AlignedVector<Scalar> m_delta[2];
    AlignedVector<Scalar> m_targets;
    AlignedVector<Scalar> m_rowTemp[2];
    std::vector<std::int32_t> m_labels;
};

extern template class MlpWorkspace<float>;
extern template class MlpWorkspace<double>;

} // namespace sgdscope
