#include "core/nn/MlpWorkspace.h"

#include "core/common/Error.h"
#include "core/common/PortableMath.h"

#include <algorithm>
#include <cstring>

namespace sgdscope {

namespace {

/// The deepest tree stack a program can need: a binary tree over at most 2^31 chunks, plus an open chunk.
constexpr int maxTreeDepth = 34;
/// Floats after every buffer of rows: a kernel may read one vector (at most 16 floats) past the last row's end.
constexpr std::size_t slack = 16;

/// Row stride for `columns` floats: narrow rows packed tight (the element-wise functions then touch no padding;
/// the kernels read whole vectors past a row's end, which the buffers' slack covers), wide ones a multiple of 16
/// (64 bytes), and an odd multiple, so that successive rows fall on different cache sets when a kernel walks
/// down a column.
std::ptrdiff_t rowStride(int columns)
{
    if (columns <= 16)
        return columns;
    std::ptrdiff_t ld = (columns + 15) / 16 * 16;
    if ((ld / 16) % 2 == 0)
        ld += 16;
    return ld;
}

kernels::ElementFunction elementFunction(Activation a)
{
    switch (a) {
    case Activation::Tanh:
        return kernels::ElementFunction::Tanh;
    case Activation::Relu:
        return kernels::ElementFunction::Relu;
    case Activation::Sigmoid:
        return kernels::ElementFunction::Sigmoid;
    case Activation::Identity:
        break;
    }
    return kernels::ElementFunction::Identity;
}

const kernels::KernelTable* const allTables[]
    = {&kernels::scalarKernels, &kernels::scalarFmaKernels, &kernels::avx2Kernels, &kernels::avx512Kernels};

} // namespace

MlpWorkspace::MlpWorkspace(const MlpSpec& spec, int capacity)
    : m_spec(spec)
    , m_capacity(capacity)
{
    if (capacity < 1)
        throw SgdError("a workspace needs room for at least one sample");
    const auto cap = static_cast<std::size_t>(capacity);
    std::ptrdiff_t widest = 0;
    for (const int width : spec.layers) {
        m_ld.push_back(rowStride(width + 1)); // + the bias column
        widest = std::max(widest, m_ld.back());
        m_act.emplace_back(static_cast<std::size_t>(m_ld.back()) * cap + slack, 0.0f);
    }
    for (auto& d : m_delta)
        d.assign(static_cast<std::size_t>(widest) * cap + slack, 0.0f);
    // Room for whichever path is active when the workspace is used (tests switch paths).
    std::size_t pack = 0;
    std::size_t slots = 0;
    for (const kernels::KernelTable* table : allTables) {
        for (int l = 0; l < spec.layerCount(); ++l) {
            const int in = spec.layers[static_cast<std::size_t>(l)];
            const int out = spec.layers[static_cast<std::size_t>(l) + 1];
            pack = std::max({pack, table->packFloats(in, out), table->packFloats(out, in)});
        }
        slots = std::max(slots, table->slotFloats(maxTreeDepth));
    }
    m_pack.assign(pack, 0.0f);
    m_slots.assign(slots, 0.0f);
    m_sampleLoss.assign(cap, 0.0);
    m_weights.assign(maxTreeDepth, nullptr);
    m_biases.assign(maxTreeDepth, nullptr);
}

void MlpWorkspace::gather(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first, int n)
{
    const int features = data.features;
    const std::ptrdiff_t ld = m_ld.front();
    float* input = m_act.front().data();
    for (int t = 0; t < n; ++t) {
        const std::int64_t sample = indices ? indices[t] : first + t;
        float* row = input + t * ld;
        const float* source = data.inputs + sample * features;
        if (features > 16)
            std::memcpy(row, source, sizeof(float) * static_cast<std::size_t>(features));
        else
            for (int f = 0; f < features; ++f) // a call to memcpy costs more than a few floats
                row[f] = source[f];
        row[features] = 1.0f;
    }
}

void MlpWorkspace::forward(const kernels::KernelTable& k, const ParameterLayout& layout, const float* params, int n)
{
    const int layers = m_spec.layerCount();
    for (int l = 0; l < layers; ++l) {
        const auto at = static_cast<std::size_t>(l);
        kernels::LinearForwardArgs args;
        args.m = n;
        args.n = m_spec.layers[at + 1];
        args.k = m_spec.layers[at];
        args.a = m_act[at].data();
        args.lda = m_ld[at];
        args.w = params + layout.weight(l).offset;
        args.bias = params + layout.bias(l).offset;
        args.z = m_act[at + 1].data();
        args.ldz = m_ld[at + 1];
        args.pack = m_pack.data();
        k.linearForward(args);
        if (l + 1 < layers) {
            float* z = m_act[at + 1].data();
            k.activate(elementFunction(m_spec.activation), z, static_cast<std::size_t>(n * m_ld[at + 1]));
            for (int t = 0; t < n; ++t)
                z[t * m_ld[at + 1] + args.n] = 1.0f;
        }
    }
}

void MlpWorkspace::lossAndDelta(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first, int n,
    float scale, bool wantDelta, std::int64_t* correct)
{
    // Sample by sample, output by output in order: the values do not depend on the path or the pass.
    const int outputs = m_spec.outputs();
    const std::ptrdiff_t ld = m_ld.back();
    const float* z = m_act.back().data();
    float* delta = m_delta[0].data();
    auto sample = [&](int t) -> std::int64_t { return indices ? indices[t] : first + t; };
    if (m_spec.loss == LossKind::MeanSquaredError) {
        // loss_i = sum over outputs of (z - y)^2 (the seed example's mean over samples of the summed squares)
        const float twiceScale = 2.0f * scale;
        for (int t = 0; t < n; ++t) {
            const float* zt = z + t * ld;
            const float* y = data.targets + sample(t) * outputs;
            float* dt = delta + t * ld;
            double loss = 0.0;
            for (int o = 0; o < outputs; ++o) {
                const float diff = zt[o] - y[o];
                loss += static_cast<double>(diff) * static_cast<double>(diff);
                if (wantDelta)
                    dt[o] = diff * twiceScale;
            }
            m_sampleLoss[static_cast<std::size_t>(t)] = loss;
        }
        return;
    }
    // Softmax cross-entropy: loss_i = log(sum exp(z - peak)) + peak - z[label]; gradient softmax - onehot.
    std::int64_t right = 0;
    for (int t = 0; t < n; ++t) {
        const float* zt = z + t * ld;
        float* e = delta + t * ld; // exp(z - peak), the delta's numerators
        const std::int32_t label = data.labels[sample(t)];
        float peak = zt[0];
        int best = 0;
        for (int o = 1; o < outputs; ++o) {
            best = zt[o] > zt[best] ? o : best;
            peak = zt[o] > peak ? zt[o] : peak;
        }
        float sum = 0.0f;
        for (int o = 0; o < outputs; ++o) {
            e[o] = portable::exp(zt[o] - peak);
            sum = sum + e[o];
        }
        m_sampleLoss[static_cast<std::size_t>(t)]
            = static_cast<double>(portable::log(sum)) + static_cast<double>(peak) - static_cast<double>(zt[label]);
        right += best == label ? 1 : 0;
        if (wantDelta) {
            const float perSum = scale / sum;
            for (int o = 0; o < outputs; ++o)
                e[o] = e[o] * perSum;
            e[label] = e[label] - scale;
        }
    }
    if (correct)
        *correct += right;
}

void MlpWorkspace::pass(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
    const std::uint32_t* indices, int n, float scale, const kernels::TreeProgram& program, float* const* stack)
{
    if (n < 1 || n > m_capacity || program.depth > maxTreeDepth)
        throw SgdError("a pass of " + std::to_string(n) + " samples (tree depth " + std::to_string(program.depth)
            + ") does not fit a workspace for " + std::to_string(m_capacity));
    const kernels::KernelTable& k = kernels::activeKernels();
    gather(data, indices, 0, n);
    forward(k, layout, params, n);
    lossAndDelta(data, indices, 0, n, scale, true, nullptr);

    int current = 0; // m_delta[current] holds d(loss)/d(z) of layer l + 1's values
    for (int l = m_spec.layerCount() - 1; l >= 0; --l) {
        const auto at = static_cast<std::size_t>(l);
        const int in = m_spec.layers[at];
        const int out = m_spec.layers[at + 1];
        for (int e = 0; e < std::max(program.stackIn, program.stackOut); ++e) {
            m_weights[static_cast<std::size_t>(e)] = stack[e] + layout.weight(l).offset;
            m_biases[static_cast<std::size_t>(e)] = stack[e] + layout.bias(l).offset;
        }
        kernels::WeightGradientArgs g;
        g.out = out;
        g.in = in;
        g.samples = n;
        g.d = m_delta[current].data();
        g.ldd = m_ld[at + 1];
        g.a = m_act[at].data();
        g.lda = m_ld[at];
        g.program = &program;
        g.weights = m_weights.data();
        g.biases = m_biases.data();
        g.tiles = m_slots.data();
        k.weightGradient(g);
        if (l == 0)
            break; // the input needs no gradient
        kernels::InputGradientArgs p;
        p.m = n;
        p.n = in;
        p.k = out;
        p.d = m_delta[current].data();
        p.ldd = m_ld[at + 1];
        p.w = params + layout.weight(l).offset;
        p.p = m_delta[1 - current].data();
        p.ldp = m_ld[at];
        p.pack = m_pack.data();
        k.inputGradient(p);
        k.multiplyByDerivative(
            elementFunction(m_spec.activation), p.p, m_act[at].data(), static_cast<std::size_t>(n * m_ld[at]));
        current = 1 - current;
    }
}

double MlpWorkspace::gradient(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
    const std::uint32_t* indices, int n, float scale, float* grad)
{
    const kernels::TreeStep step {.begin = 0, .end = n};
    const kernels::TreeProgram program {&step, 1, 0, 1, 1};
    float* const stack[] = {grad};
    pass(layout, params, data, indices, n, scale, program, stack);
    double lossSum = 0.0;
    for (int t = 0; t < n; ++t)
        lossSum += m_sampleLoss[static_cast<std::size_t>(t)];
    return lossSum;
}

EvalSums MlpWorkspace::evaluate(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
    std::int64_t first, std::int64_t n)
{
    const kernels::KernelTable& k = kernels::activeKernels();
    EvalSums sums;
    for (std::int64_t done = 0; done < n;) {
        const int piece = static_cast<int>(std::min<std::int64_t>(m_capacity, n - done));
        const std::int64_t start = first + done;
        gather(data, nullptr, start, piece);
        forward(k, layout, params, piece);
        lossAndDelta(data, nullptr, start, piece, 1.0f, false, &sums.correct);
        for (int t = 0; t < piece; ++t)
            sums.lossSum += m_sampleLoss[static_cast<std::size_t>(t)];
        sums.samples += piece;
        done += piece;
    }
    return sums;
}

float MlpWorkspace::output(int sample, int j) const
{
    return m_act.back()[static_cast<std::size_t>(sample * m_ld.back() + j)];
}

} // namespace sgdscope
