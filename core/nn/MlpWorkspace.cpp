#include "core/nn/MlpWorkspace.h"

#include "core/nn/Gemm.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace sgdscope {

namespace {

template<typename Scalar>
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
template<typename Scalar>
using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template<typename Scalar>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

/// Products this small are cheaper coefficient by coefficient than through a blocked GEMM, whose
/// packing dominates at the seed example's sizes (1-5-1). The choice depends only on the shapes, so it
/// is the same for every worker.
constexpr double lazyProductWork = 4096.0;

template<typename Dst, typename Lhs, typename Rhs>
void multiply(Dst&& dst, const Lhs& lhs, const Rhs& rhs)
{
    const double work
        = static_cast<double>(lhs.rows()) * static_cast<double>(lhs.cols()) * static_cast<double>(rhs.cols());
    if (work <= lazyProductWork)
        dst.noalias() = lhs.lazyProduct(rhs);
    else
        dst.noalias() = lhs * rhs;
}

bool useGemm(int m, int n, int k)
{
    return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > lazyProductWork;
}

// Activations and deltas are stored feature-major: a layer's values are a row-major (width x n) block,
// each feature's n samples contiguous. Small layers then vectorise along the samples; for the large
// products the same memory is a column-major (n x width) matrix, which is how BLAS sees it below.

/// z (out x n) = W a, W row-major out x in, a in x n.
template<typename Scalar>
void linearForward(const Scalar* w, const Scalar* a, Scalar* z, int out, int in, int n)
{
    if constexpr (std::is_same_v<Scalar, float>) {
        if (useGemm(out, n, in)) {
            // z^T (n x out) = a^T (n x in) * W^T (in x out)
            gemmColumnMajor(false, false, n, out, in, a, n, w, in, z, n);
            return;
        }
    }
    Eigen::Map<RowMatrix<Scalar>> zm(z, out, n);
    multiply(zm, Eigen::Map<const RowMatrix<Scalar>>(w, out, in), Eigen::Map<const RowMatrix<Scalar>>(a, in, n));
}

/// gw (row-major out x in) = delta a^T, delta out x n, a in x n.
template<typename Scalar>
void weightGradient(const Scalar* delta, const Scalar* a, Scalar* gw, int out, int in, int n)
{
    if constexpr (std::is_same_v<Scalar, float>) {
        if (useGemm(in, out, n)) {
            // gw^T (in x out) = (a^T)^T (in x n) * delta^T (n x out)
            gemmColumnMajor(true, false, in, out, n, a, n, delta, n, gw, in);
            return;
        }
    }
    Eigen::Map<RowMatrix<Scalar>> g(gw, out, in);
    multiply(g, Eigen::Map<const RowMatrix<Scalar>>(delta, out, n),
        Eigen::Map<const RowMatrix<Scalar>>(a, in, n).transpose());
}

/// prev (in x n) = W^T delta, W row-major out x in, delta out x n.
template<typename Scalar>
void inputGradient(const Scalar* w, const Scalar* delta, Scalar* prev, int out, int in, int n)
{
    if constexpr (std::is_same_v<Scalar, float>) {
        if (useGemm(in, n, out)) {
            // prev^T (n x in) = delta^T (n x out) * W (out x in), W stored as W^T column-major (ld in)
            gemmColumnMajor(false, true, n, in, out, delta, n, w, in, prev, n);
            return;
        }
    }
    Eigen::Map<RowMatrix<Scalar>> p(prev, in, n);
    multiply(p, Eigen::Map<const RowMatrix<Scalar>>(w, out, in).transpose(),
        Eigen::Map<const RowMatrix<Scalar>>(delta, out, n));
}

template<typename Scalar, typename Block>
void activate(Activation a, Block&& z)
{
    switch (a) {
    case Activation::Tanh:
        z = z.array().tanh().matrix();
        break;
    case Activation::Relu:
        z = z.cwiseMax(Scalar(0));
        break;
    case Activation::Sigmoid:
        z = z.array().logistic().matrix();
        break;
    case Activation::Identity:
        break;
    }
}

/// delta *= f'(z), written in terms of the activation a = f(z).
template<typename Scalar, typename DeltaBlock, typename ActBlock>
void multiplyByDerivative(Activation a, DeltaBlock&& delta, const ActBlock& act)
{
    switch (a) {
    case Activation::Tanh:
        delta.array() *= (Scalar(1) - act.array().square());
        break;
    case Activation::Relu:
        delta.array() *= (act.array() > Scalar(0)).template cast<Scalar>();
        break;
    case Activation::Sigmoid:
        delta.array() *= act.array() * (Scalar(1) - act.array());
        break;
    case Activation::Identity:
        break;
    }
}

} // namespace

template<typename Scalar>
MlpWorkspace<Scalar>::MlpWorkspace(const MlpSpec& spec, int capacity)
    : m_spec(spec)
    , m_capacity(capacity)
{
    const auto cap = static_cast<std::size_t>(capacity);
    int widest = 0;
    for (const int width : spec.layers) {
        m_act.emplace_back(static_cast<std::size_t>(width) * cap, Scalar(0));
        widest = std::max(widest, width);
    }
    for (auto& d : m_delta)
        d.assign(static_cast<std::size_t>(widest) * cap, Scalar(0));
    m_targets.assign(static_cast<std::size_t>(spec.outputs()) * cap, Scalar(0));
    for (auto& r : m_rowTemp)
        r.assign(cap, Scalar(0));
    m_labels.assign(cap, 0);
}

template<typename Scalar>
void MlpWorkspace<Scalar>::gather(
    const SampleView<Scalar>& data, const std::uint32_t* indices, std::int64_t first, int n)
{
    // Transposes the samples' columns into the feature-major input block.
    const int features = data.features;
    Scalar* input = m_act[0].data();
    for (int t = 0; t < n; ++t) {
        const std::int64_t sample = indices ? indices[t] : first + t;
        const Scalar* src = data.inputs + sample * features;
        for (int f = 0; f < features; ++f)
            input[static_cast<std::size_t>(f) * static_cast<std::size_t>(n) + static_cast<std::size_t>(t)] = src[f];
    }
}

template<typename Scalar>
void MlpWorkspace<Scalar>::forward(const ParameterLayout& layout, const Scalar* params, int n)
{
    const int layers = m_spec.layerCount();
    for (int l = 0; l < layers; ++l) {
        const int in = m_spec.layers[static_cast<std::size_t>(l)];
        const int out = m_spec.layers[static_cast<std::size_t>(l) + 1];
        const Eigen::Map<const Vector<Scalar>> b(params + layout.bias(l).offset, out);
        Eigen::Map<RowMatrix<Scalar>> z(m_act[static_cast<std::size_t>(l) + 1].data(), out, n);
        linearForward(
            params + layout.weight(l).offset, m_act[static_cast<std::size_t>(l)].data(), z.data(), out, in, n);
        z.colwise() += b;
        if (l + 1 < layers)
            activate<Scalar>(m_spec.activation, z);
    }
}

template<typename Scalar>
double MlpWorkspace<Scalar>::lossAndDelta(const SampleView<Scalar>& data, const std::uint32_t* indices,
    std::int64_t first, int n, Scalar scale, bool wantDelta, std::int64_t* correct)
{
    const int outputs = m_spec.outputs();
    const Eigen::Map<const RowMatrix<Scalar>> z(m_act.back().data(), outputs, n);
    Eigen::Map<RowMatrix<Scalar>> delta(m_delta[0].data(), outputs, n);
    auto sample = [&](int t) -> std::int64_t { return indices ? indices[t] : first + t; };
    if (m_spec.loss == LossKind::MeanSquaredError) {
        // loss_i = sum over outputs of (z - y)^2 (the seed example's mean over samples of the summed squares)
        Eigen::Map<RowMatrix<Scalar>> y(m_targets.data(), outputs, n);
        for (int t = 0; t < n; ++t) {
            const Scalar* src = data.targets + sample(t) * outputs;
            for (int o = 0; o < outputs; ++o)
                y(o, t) = src[o];
        }
        Eigen::Map<RowMatrix<Scalar>> diff(wantDelta ? m_delta[0].data() : m_delta[1].data(), outputs, n);
        diff = z - y;
        const double lossSum = static_cast<double>(diff.squaredNorm());
        if (wantDelta)
            delta *= Scalar(2) * scale;
        return lossSum;
    }
    // Softmax cross-entropy, vectorised along the samples: loss_i = logsumexp(z_i) - z_i[label],
    // gradient softmax(z_i) - onehot(label).
    Eigen::Map<Eigen::Array<Scalar, 1, Eigen::Dynamic>> peak(m_rowTemp[0].data(), n);
    Eigen::Map<Eigen::Array<Scalar, 1, Eigen::Dynamic>> sums(m_rowTemp[1].data(), n);
    Eigen::Map<RowMatrix<Scalar>> e(wantDelta ? m_delta[0].data() : m_delta[1].data(), outputs, n);
    peak = z.array().colwise().maxCoeff();
    e.array() = (z.array().rowwise() - peak).exp();
    sums = e.array().colwise().sum();
    double lossSum = 0.0;
    std::int64_t right = 0;
    for (int t = 0; t < n; ++t) {
        const std::int32_t label = data.labels[sample(t)];
        lossSum += static_cast<double>(std::log(sums(t)) + peak(t) - z(label, t));
        if (correct) {
            int best = 0;
            for (int o = 1; o < outputs; ++o)
                best = z(o, t) > z(best, t) ? o : best;
            right += best == label ? 1 : 0;
        }
    }
    if (wantDelta) {
        delta.array().rowwise() *= scale / sums;
        for (int t = 0; t < n; ++t)
            delta(data.labels[sample(t)], t) -= scale;
    }
    if (correct)
        *correct += right;
    return lossSum;
}

template<typename Scalar>
double MlpWorkspace<Scalar>::gradient(const ParameterLayout& layout, const Scalar* params,
    const SampleView<Scalar>& data, const std::uint32_t* indices, int n, Scalar scale, Scalar* grad)
{
    gather(data, indices, 0, n);
    forward(layout, params, n);
    const double lossSum = lossAndDelta(data, indices, 0, n, scale, true, nullptr);

    int current = 0; // m_delta[current] holds d(loss)/d(z) of layer l+1
    for (int l = m_spec.layerCount() - 1; l >= 0; --l) {
        const int in = m_spec.layers[static_cast<std::size_t>(l)];
        const int out = m_spec.layers[static_cast<std::size_t>(l) + 1];
        const Eigen::Map<const RowMatrix<Scalar>> delta(m_delta[current].data(), out, n);
        const Eigen::Map<const RowMatrix<Scalar>> a(m_act[static_cast<std::size_t>(l)].data(), in, n);
        Eigen::Map<Vector<Scalar>> gb(grad + layout.bias(l).offset, out);
        weightGradient(delta.data(), a.data(), grad + layout.weight(l).offset, out, in, n);
        gb = delta.rowwise().sum();
        if (l == 0)
            break; // the input needs no gradient
        Eigen::Map<RowMatrix<Scalar>> prevDelta(m_delta[1 - current].data(), in, n);
        inputGradient(params + layout.weight(l).offset, delta.data(), prevDelta.data(), out, in, n);
        multiplyByDerivative<Scalar>(m_spec.activation, prevDelta, a);
        current = 1 - current;
    }
    return lossSum;
}

template<typename Scalar>
EvalSums MlpWorkspace<Scalar>::evaluate(const ParameterLayout& layout, const Scalar* params,
    const SampleView<Scalar>& data, std::int64_t first, std::int64_t n)
{
    EvalSums sums;
    for (std::int64_t done = 0; done < n;) {
        const int piece = static_cast<int>(std::min<std::int64_t>(m_capacity, n - done));
        const std::int64_t start = first + done;
        gather(data, nullptr, start, piece);
        forward(layout, params, piece);
        sums.lossSum += lossAndDelta(data, nullptr, start, piece, Scalar(1), false, &sums.correct);
        sums.samples += piece;
        done += piece;
    }
    return sums;
}

template class MlpWorkspace<float>;
template class MlpWorkspace<double>;

} // namespace sgdscope
