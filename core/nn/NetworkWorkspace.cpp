#include "core/nn/NetworkWorkspace.h"

#include "core/common/Error.h"
#include "core/common/PortableMath.h"
#include "core/nn/Pooling.h"

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

/// Image channels: the pass's samples back to back, the stride a whole number of cache lines.
std::ptrdiff_t channelStride(std::int64_t floats)
{
    return static_cast<std::ptrdiff_t>((floats + 15) / 16 * 16);
}

/// The reduction trees a convolution's scratch has room for when the workspace is made (deeper ones grow it).
constexpr int convScratchDepth = 12;

const kernels::KernelTable* const allTables[]
    = {&kernels::scalarKernels, &kernels::scalarFmaKernels, &kernels::avx2Kernels, &kernels::avx512Kernels};

} // namespace

NetworkWorkspace::NetworkWorkspace(const NetworkSpec& spec, int capacity)
    : m_spec(spec)
    , m_capacity(capacity)
{
    if (capacity < 1)
        throw SgdError("a workspace needs room for at least one sample");
    m_spec.check();
    const auto cap = static_cast<std::size_t>(capacity);
    const std::vector<TensorShape> shapes = m_spec.shapes();
    auto addTensor = [&](const TensorShape& shape) {
        Tensor t;
        t.shape = shape;
        std::size_t floats = 0;
        if (shape.flat) {
            t.ld = rowStride(shape.channels + 1); // + the bias column
            floats = static_cast<std::size_t>(t.ld) * cap;
        } else {
            t.ld = channelStride(shape.area() * capacity);
            floats = static_cast<std::size_t>(t.ld) * static_cast<std::size_t>(shape.channels);
        }
        t.values.assign(floats + slack, 0.0f);
        m_tensors.push_back(std::move(t));
        return static_cast<int>(m_tensors.size()) - 1;
    };
    // The input: a vector, or the image its first layer makes of it (the gather writes the image).
    const bool reshaped = !m_spec.layers.empty() && m_spec.layers.front().kind == LayerKind::Unflatten;
    addTensor(reshaped ? shapes[1] : shapes[0]);
    int weighted = 0;
    m_firstWeighted = m_spec.layers.size();
    for (std::size_t l = 0; l < m_spec.layers.size(); ++l) {
        const LayerSpec& layer = m_spec.layers[l];
        const int in = l == 0 ? 0 : m_output.back();
        m_input.push_back(in);
        const bool inPlace = layer.kind == LayerKind::Activation || layer.kind == LayerKind::Unflatten;
        m_output.push_back(inPlace ? in : addTensor(shapes[l + 1]));
        m_weighted.push_back(layer.weighted() ? weighted++ : -1);
        if (layer.weighted() && m_firstWeighted == m_spec.layers.size())
            m_firstWeighted = l;
    }
    std::size_t widest = 0;
    for (const Tensor& t : m_tensors)
        widest = std::max(widest, t.values.size());
    for (auto& d : m_delta)
        d.assign(widest, 0.0f);
    // Room for whichever path is active when the workspace is used (tests switch paths).
    std::size_t pack = 0;
    std::size_t slots = 0;
    std::size_t convScratch = 0;
    for (const kernels::KernelTable* table : allTables) {
        for (std::size_t l = 0; l < m_spec.layers.size(); ++l) {
            const LayerSpec& layer = m_spec.layers[l];
            if (layer.kind == LayerKind::Dense) {
                const int in = static_cast<int>(shapes[l].size());
                const int out = layer.outputs;
                pack = std::max({pack, table->packFloats(in, out), table->packFloats(out, in)});
            } else if (layer.kind == LayerKind::Conv) {
                const kernels::ConvGeometry g = convGeometry(l, capacity);
                convScratch = std::max(convScratch, table->convScratchFloats(g, convScratchDepth));
            }
        }
        slots = std::max(slots, table->slotFloats(maxTreeDepth));
    }
    m_pack.assign(pack, 0.0f);
    m_slots.assign(slots, 0.0f);
    m_convScratch.assign(convScratch, 0.0f);
    m_convScratchDepth = convScratchDepth;
    m_sampleLoss.assign(cap, 0.0);
    m_weights.assign(maxTreeDepth, nullptr);
    m_biases.assign(maxTreeDepth, nullptr);
}

kernels::ConvGeometry NetworkWorkspace::convGeometry(std::size_t layer, int n) const
{
    const LayerSpec& l = m_spec.layers[layer];
    const Tensor& in = m_tensors[static_cast<std::size_t>(m_input[layer])];
    const Tensor& out = m_tensors[static_cast<std::size_t>(m_output[layer])];
    kernels::ConvGeometry g;
    g.samples = n;
    g.channels = in.shape.channels;
    g.height = in.shape.height;
    g.width = in.shape.width;
    g.outChannels = out.shape.channels;
    g.outHeight = out.shape.height;
    g.outWidth = out.shape.width;
    g.kernelHeight = l.kernelHeight;
    g.kernelWidth = l.kernelWidth;
    g.stride = l.stride;
    g.padding = l.padding;
    g.inStride = in.ld;
    g.outStride = out.ld;
    return g;
}

void NetworkWorkspace::gather(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first, int n)
{
    const int features = data.features;
    Tensor& input = m_tensors.front();
    float* values = input.values.data();
    if (!input.shape.flat) {
        // Channel-major over the pass: channel c of sample t at c * ld + t * area.
        const std::int64_t area = input.shape.area();
        for (int t = 0; t < n; ++t) {
            const std::int64_t sample = indices ? indices[t] : first + t;
            const float* source = data.inputs + sample * features;
            for (int c = 0; c < input.shape.channels; ++c)
                std::memcpy(values + c * input.ld + t * area, source + c * area,
                    sizeof(float) * static_cast<std::size_t>(area));
        }
        return;
    }
    const std::ptrdiff_t ld = input.ld;
    for (int t = 0; t < n; ++t) {
        const std::int64_t sample = indices ? indices[t] : first + t;
        float* row = values + t * ld;
        const float* source = data.inputs + sample * features;
        if (features > 16)
            std::memcpy(row, source, sizeof(float) * static_cast<std::size_t>(features));
        else
            for (int f = 0; f < features; ++f) // a call to memcpy costs more than a few floats
                row[f] = source[f];
        row[features] = 1.0f;
    }
}

void NetworkWorkspace::forward(const kernels::KernelTable& k, const ParameterLayout& layout, const float* params, int n)
{
    for (std::size_t l = 0; l < m_spec.layers.size(); ++l) {
        const LayerSpec& layer = m_spec.layers[l];
        Tensor& in = m_tensors[static_cast<std::size_t>(m_input[l])];
        Tensor& out = m_tensors[static_cast<std::size_t>(m_output[l])];
        switch (layer.kind) {
        case LayerKind::Dense: {
            const int inputs = in.shape.channels;
            float* a = in.values.data();
            for (int t = 0; t < n; ++t) // the bias column (its 1s may have passed through an activation)
                a[t * in.ld + inputs] = 1.0f;
            kernels::LinearForwardArgs args;
            args.m = n;
            args.n = layer.outputs;
            args.k = inputs;
            args.a = a;
            args.lda = in.ld;
            args.w = params + layout.weight(m_weighted[l]).offset;
            args.bias = params + layout.bias(m_weighted[l]).offset;
            args.z = out.values.data();
            args.ldz = out.ld;
            args.pack = m_pack.data();
            k.linearForward(args);
            break;
        }
        case LayerKind::Conv: {
            kernels::ConvForwardArgs args;
            args.g = convGeometry(l, n);
            args.x = in.values.data();
            args.w = params + layout.weight(m_weighted[l]).offset;
            args.bias = params + layout.bias(m_weighted[l]).offset;
            args.z = out.values.data();
            args.scratch = m_convScratch.data();
            k.convForward(args);
            break;
        }
        case LayerKind::Activation:
            if (out.shape.flat) {
                k.activate(elementFunction(layer.activation), out.values.data(), static_cast<std::size_t>(n * out.ld));
            } else {
                for (int c = 0; c < out.shape.channels; ++c)
                    k.activate(elementFunction(layer.activation), out.values.data() + c * out.ld,
                        static_cast<std::size_t>(n * out.shape.area()));
            }
            break;
        case LayerKind::MaxPool:
        case LayerKind::AvgPool: {
            const PoolShape shape {n * in.shape.height, in.shape.width, layer.kernelHeight, layer.kernelWidth};
            for (int c = 0; c < in.shape.channels; ++c) {
                if (layer.kind == LayerKind::MaxPool)
                    maxPoolForward(shape, in.values.data() + c * in.ld, out.values.data() + c * out.ld);
                else
                    avgPoolForward(shape, in.values.data() + c * in.ld, out.values.data() + c * out.ld);
            }
            break;
        }
        case LayerKind::Flatten: {
            // channel-major within a sample's row, as nn.Flatten on NCHW
            const std::int64_t area = in.shape.area();
            for (int t = 0; t < n; ++t)
                for (int c = 0; c < in.shape.channels; ++c)
                    std::memcpy(out.values.data() + t * out.ld + c * area, in.values.data() + c * in.ld + t * area,
                        sizeof(float) * static_cast<std::size_t>(area));
            break;
        }
        case LayerKind::Unflatten:
            break; // the gather wrote the image
        }
    }
}

void NetworkWorkspace::lossAndDelta(const SampleView<float>& data, const std::uint32_t* indices, std::int64_t first,
    int n, float scale, bool wantDelta, std::int64_t* correct)
{
    // Sample by sample, output by output in order: the values do not depend on the path or the pass.
    const int outputs = m_spec.outputs();
    const std::ptrdiff_t ld = m_tensors.back().ld;
    const float* z = m_tensors.back().values.data();
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

void NetworkWorkspace::pass(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
    const std::uint32_t* indices, int n, float scale, const kernels::TreeProgram& program, float* const* stack)
{
    if (n < 1 || n > m_capacity || program.depth > maxTreeDepth)
        throw SgdError("a pass of " + std::to_string(n) + " samples (tree depth " + std::to_string(program.depth)
            + ") does not fit a workspace for " + std::to_string(m_capacity));
    const kernels::KernelTable& k = kernels::activeKernels();
    gather(data, indices, 0, n);
    forward(k, layout, params, n);
    lossAndDelta(data, indices, 0, n, scale, true, nullptr);

    int current = 0; // m_delta[current] holds d(loss)/d(values) of layer l's output
    const int entries = std::max(program.stackIn, program.stackOut);
    for (std::size_t l = m_spec.layers.size(); l-- > m_firstWeighted;) {
        const LayerSpec& layer = m_spec.layers[l];
        const Tensor& in = m_tensors[static_cast<std::size_t>(m_input[l])];
        const Tensor& out = m_tensors[static_cast<std::size_t>(m_output[l])];
        const bool below = l > m_firstWeighted; // whether the layer's input needs its gradient
        float* delta = m_delta[current].data();
        float* next = m_delta[1 - current].data();
        if (layer.weighted()) {
            const int w = m_weighted[l];
            for (int e = 0; e < entries; ++e) {
                m_weights[static_cast<std::size_t>(e)] = stack[e] + layout.weight(w).offset;
                m_biases[static_cast<std::size_t>(e)] = stack[e] + layout.bias(w).offset;
            }
        }
        switch (layer.kind) {
        case LayerKind::Dense: {
            const int inputs = in.shape.channels;
            const int w = m_weighted[l];
            kernels::WeightGradientArgs g;
            g.out = layer.outputs;
            g.in = inputs;
            g.samples = n;
            g.d = delta;
            g.ldd = out.ld;
            g.a = in.values.data();
            g.lda = in.ld;
            g.program = &program;
            g.weights = m_weights.data();
            g.biases = m_biases.data();
            g.tiles = m_slots.data();
            k.weightGradient(g);
            if (!below)
                break; // the input needs no gradient
            kernels::InputGradientArgs p;
            p.m = n;
            p.n = inputs;
            p.k = layer.outputs;
            p.d = delta;
            p.ldd = out.ld;
            p.w = params + layout.weight(w).offset;
            p.p = next;
            p.ldp = in.ld;
            p.pack = m_pack.data();
            k.inputGradient(p);
            current = 1 - current;
            break;
        }
        case LayerKind::Conv: {
            const int w = m_weighted[l];
            const kernels::ConvGeometry geometry = convGeometry(l, n);
            if (program.depth > m_convScratchDepth) {
                // (rare: see the class comment) room for this tree in every path's layout
                std::size_t floats = 0;
                for (const kernels::KernelTable* table : allTables)
                    floats = std::max(floats, table->convScratchFloats(convGeometry(l, m_capacity), program.depth));
                m_convScratch.assign(std::max(floats, m_convScratch.size()), 0.0f);
                m_convScratchDepth = program.depth;
            }
            kernels::ConvWeightGradientArgs g;
            g.g = geometry;
            g.dz = delta;
            g.x = in.values.data();
            g.program = &program;
            g.weights = m_weights.data();
            g.biases = m_biases.data();
            g.scratch = m_convScratch.data();
            k.convWeightGradient(g);
            if (!below)
                break;
            kernels::ConvInputGradientArgs p;
            p.g = geometry;
            p.dz = delta;
            p.w = params + layout.weight(w).offset;
            p.dx = next;
            p.scratch = m_convScratch.data();
            k.convInputGradient(p);
            current = 1 - current;
            break;
        }
        case LayerKind::Activation:
            if (out.shape.flat) {
                k.multiplyByDerivative(
                    elementFunction(layer.activation), delta, out.values.data(), static_cast<std::size_t>(n * out.ld));
            } else {
                for (int c = 0; c < out.shape.channels; ++c)
                    k.multiplyByDerivative(elementFunction(layer.activation), delta + c * out.ld,
                        out.values.data() + c * out.ld, static_cast<std::size_t>(n * out.shape.area()));
            }
            break;
        case LayerKind::MaxPool:
        case LayerKind::AvgPool: {
            const PoolShape shape {n * in.shape.height, in.shape.width, layer.kernelHeight, layer.kernelWidth};
            for (int c = 0; c < in.shape.channels; ++c) {
                if (layer.kind == LayerKind::MaxPool)
                    maxPoolBackward(shape, in.values.data() + c * in.ld, delta + c * out.ld, next + c * in.ld);
                else
                    avgPoolBackward(shape, delta + c * out.ld, next + c * in.ld);
            }
            current = 1 - current;
            break;
        }
        case LayerKind::Flatten: {
            const std::int64_t area = in.shape.area();
            for (int t = 0; t < n; ++t)
                for (int c = 0; c < in.shape.channels; ++c)
                    std::memcpy(next + c * in.ld + t * area, delta + t * out.ld + c * area,
                        sizeof(float) * static_cast<std::size_t>(area));
            current = 1 - current;
            break;
        }
        case LayerKind::Unflatten:
            break;
        }
    }
}

double NetworkWorkspace::gradient(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
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

EvalSums NetworkWorkspace::evaluate(const ParameterLayout& layout, const float* params, const SampleView<float>& data,
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

float NetworkWorkspace::output(int sample, int j) const
{
    const Tensor& out = m_tensors.back();
    return out.values[static_cast<std::size_t>(sample * out.ld + j)];
}

} // namespace sgdscope
