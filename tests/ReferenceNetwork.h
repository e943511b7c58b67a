#pragma once
// A network in double precision written as plainly as possible (loops over every index of every formula, the C
// library's tanh, exp and log), independent of the training kernels and of the workspace's layouts: the reference
// that test gradients, layers and trainers are checked against. A sample's values between layers are one vector
// in PyTorch's CHW order, so a flatten or an input reshape changes nothing.

#include "core/nn/NetworkSpec.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/nn/ParameterLayout.h"
#include "core/nn/SampleView.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace sgdscope::testing {

class ReferenceNetwork
{
public:
    explicit ReferenceNetwork(NetworkSpec spec)
        : m_spec(std::move(spec))
        , m_shapes(m_spec.shapes())
    {
    }

    /// grad = scale * sum over samples indices[0..n) of d(loss_i)/d(params) (padded layout); returns the sum
    /// of the per-sample losses.
    double gradient(const ParameterLayout& layout, const double* params, const SampleView<double>& data,
        const std::uint32_t* indices, int n, double scale, double* grad)
    {
        for (const auto& t : layout.tensors())
            std::fill(grad + t.offset, grad + t.offset + t.size, 0.0);
        double lossSum = 0.0;
        for (int s = 0; s < n; ++s)
            lossSum += sample(layout, params, data, indices[s], scale, grad, nullptr);
        return lossSum;
    }

    EvalSums evaluate(const ParameterLayout& layout, const double* params, const SampleView<double>& data,
        std::int64_t first, std::int64_t n)
    {
        EvalSums sums;
        for (std::int64_t s = first; s < first + n; ++s) {
            sums.lossSum += sample(layout, params, data, s, 0.0, nullptr, &sums.correct);
            ++sums.samples;
        }
        return sums;
    }

    /// The outputs (logits or values) of one sample.
    std::vector<double> outputs(
        const ParameterLayout& layout, const double* params, const SampleView<double>& data, std::int64_t index) const
    {
        return forward(layout, params, data, index).back();
    }

private:
    static double activate(Activation f, double z)
    {
        switch (f) {
        case Activation::Tanh:
            return std::tanh(z);
        case Activation::Relu:
            return z > 0 ? z : 0.0;
        case Activation::Sigmoid:
            return 1.0 / (1.0 + std::exp(-z));
        case Activation::Identity:
            break;
        }
        return z;
    }
    /// f'(z) in terms of a = f(z).
    static double derivative(Activation f, double a)
    {
        switch (f) {
        case Activation::Tanh:
            return 1.0 - a * a;
        case Activation::Relu:
            return a > 0 ? 1.0 : 0.0;
        case Activation::Sigmoid:
            return a * (1.0 - a);
        case Activation::Identity:
            break;
        }
        return 1.0;
    }

    /// The window of pool output (c, y, x): the input indices, row-major.
    std::vector<std::size_t> window(std::size_t layer, int c, int y, int x) const
    {
        const LayerSpec& l = m_spec.layers[layer];
        const TensorShape& in = m_shapes[layer];
        std::vector<std::size_t> at;
        for (int ky = 0; ky < l.kernelHeight; ++ky)
            for (int kx = 0; kx < l.kernelWidth; ++kx)
                at.push_back(static_cast<std::size_t>(
                    (c * in.height + y * l.kernelHeight + ky) * in.width + x * l.kernelWidth + kx));
        return at;
    }

    /// Every layer's values of one sample: values[0] the input, values[l + 1] layer l's output.
    std::vector<std::vector<double>> forward(
        const ParameterLayout& layout, const double* params, const SampleView<double>& data, std::int64_t index) const
    {
        std::vector<std::vector<double>> values(1);
        for (int f = 0; f < data.features; ++f)
            values[0].push_back(data.inputs[index * data.features + f]);
        int weighted = 0;
        for (std::size_t l = 0; l < m_spec.layers.size(); ++l) {
            const LayerSpec& layer = m_spec.layers[l];
            const TensorShape& in = m_shapes[l];
            const TensorShape& outShape = m_shapes[l + 1];
            const std::vector<double>& a = values.back();
            std::vector<double> z(static_cast<std::size_t>(outShape.size()), 0.0);
            switch (layer.kind) {
            case LayerKind::Dense: {
                const double* w = params + layout.weight(weighted).offset;
                const double* b = params + layout.bias(weighted).offset;
                ++weighted;
                const int inputs = static_cast<int>(in.size());
                for (int o = 0; o < layer.outputs; ++o) {
                    double sum = b[o];
                    for (int i = 0; i < inputs; ++i)
                        sum += w[o * inputs + i] * a[static_cast<std::size_t>(i)];
                    z[static_cast<std::size_t>(o)] = sum;
                }
                break;
            }
            case LayerKind::Conv: {
                const double* w = params + layout.weight(weighted).offset;
                const double* b = params + layout.bias(weighted).offset;
                ++weighted;
                for (int o = 0; o < outShape.channels; ++o)
                    for (int oy = 0; oy < outShape.height; ++oy)
                        for (int ox = 0; ox < outShape.width; ++ox) {
                            double sum = b[o];
                            for (int c = 0; c < in.channels; ++c)
                                for (int ky = 0; ky < layer.kernelHeight; ++ky)
                                    for (int kx = 0; kx < layer.kernelWidth; ++kx) {
                                        const int iy = oy * layer.stride - layer.padding + ky;
                                        const int ix = ox * layer.stride - layer.padding + kx;
                                        if (iy < 0 || iy >= in.height || ix < 0 || ix >= in.width)
                                            continue;
                                        sum += w[((o * in.channels + c) * layer.kernelHeight + ky) * layer.kernelWidth
                                                   + kx]
                                            * a[static_cast<std::size_t>((c * in.height + iy) * in.width + ix)];
                                    }
                            z[static_cast<std::size_t>((o * outShape.height + oy) * outShape.width + ox)] = sum;
                        }
                break;
            }
            case LayerKind::MaxPool:
            case LayerKind::AvgPool:
                for (int c = 0; c < outShape.channels; ++c)
                    for (int y = 0; y < outShape.height; ++y)
                        for (int x = 0; x < outShape.width; ++x) {
                            const std::vector<std::size_t> at = window(l, c, y, x);
                            double v = layer.kind == LayerKind::MaxPool ? a[at.front()] : 0.0;
                            for (const std::size_t i : at)
                                v = layer.kind == LayerKind::MaxPool ? std::max(v, a[i]) : v + a[i];
                            if (layer.kind == LayerKind::AvgPool)
                                v /= static_cast<double>(at.size());
                            z[static_cast<std::size_t>((c * outShape.height + y) * outShape.width + x)] = v;
                        }
                break;
            case LayerKind::Activation:
                for (std::size_t i = 0; i < z.size(); ++i)
                    z[i] = activate(layer.activation, a[i]);
                break;
            case LayerKind::Flatten:
            case LayerKind::Unflatten:
                z = a; // CHW either way
                break;
            }
            values.push_back(std::move(z));
        }
        return values;
    }

    /// One sample: its loss; adds scale * its gradient to grad (if any) and counts a correct prediction.
    double sample(const ParameterLayout& layout, const double* params, const SampleView<double>& data,
        std::int64_t index, double scale, double* grad, std::int64_t* correct) const
    {
        const std::vector<std::vector<double>> values = forward(layout, params, data, index);
        const std::vector<double>& z = values.back();
        const int outputs = static_cast<int>(z.size());
        std::vector<double> delta(z.size(), 0.0);
        double loss = 0.0;
        if (m_spec.loss == LossKind::MeanSquaredError) {
            for (int o = 0; o < outputs; ++o) {
                const double diff = z[static_cast<std::size_t>(o)] - data.targets[index * outputs + o];
                loss += diff * diff;
                delta[static_cast<std::size_t>(o)] = 2.0 * diff * scale;
            }
        } else {
            if (!data.labels)
                throw std::invalid_argument("cross-entropy needs labels");
            const std::int32_t label = data.labels[index];
            int best = 0;
            for (int o = 1; o < outputs; ++o)
                best = z[static_cast<std::size_t>(o)] > z[static_cast<std::size_t>(best)] ? o : best;
            const double peak = z[static_cast<std::size_t>(best)];
            double sum = 0.0;
            for (const double v : z)
                sum += std::exp(v - peak);
            loss = std::log(sum) + peak - z[static_cast<std::size_t>(label)];
            for (int o = 0; o < outputs; ++o)
                delta[static_cast<std::size_t>(o)]
                    = (std::exp(z[static_cast<std::size_t>(o)] - peak) / sum - (o == label ? 1.0 : 0.0)) * scale;
            if (correct)
                *correct += best == label ? 1 : 0;
        }
        if (!grad)
            return loss;
        int weighted = m_spec.weightedLayerCount();
        for (std::size_t l = m_spec.layers.size(); l-- > 0;) {
            const LayerSpec& layer = m_spec.layers[l];
            const TensorShape& in = m_shapes[l];
            const TensorShape& outShape = m_shapes[l + 1];
            const std::vector<double>& a = values[l];
            const std::vector<double>& out = values[l + 1];
            std::vector<double> previous(a.size(), 0.0);
            switch (layer.kind) {
            case LayerKind::Dense: {
                --weighted;
                const double* w = params + layout.weight(weighted).offset;
                double* gw = grad + layout.weight(weighted).offset;
                double* gb = grad + layout.bias(weighted).offset;
                const int inputs = static_cast<int>(in.size());
                for (int o = 0; o < layer.outputs; ++o) {
                    const double d = delta[static_cast<std::size_t>(o)];
                    gb[o] += d;
                    for (int i = 0; i < inputs; ++i) {
                        gw[o * inputs + i] += d * a[static_cast<std::size_t>(i)];
                        previous[static_cast<std::size_t>(i)] += w[o * inputs + i] * d;
                    }
                }
                break;
            }
            case LayerKind::Conv: {
                --weighted;
                const double* w = params + layout.weight(weighted).offset;
                double* gw = grad + layout.weight(weighted).offset;
                double* gb = grad + layout.bias(weighted).offset;
                for (int o = 0; o < outShape.channels; ++o)
                    for (int oy = 0; oy < outShape.height; ++oy)
                        for (int ox = 0; ox < outShape.width; ++ox) {
                            const double d
                                = delta[static_cast<std::size_t>((o * outShape.height + oy) * outShape.width + ox)];
                            gb[o] += d;
                            for (int c = 0; c < in.channels; ++c)
                                for (int ky = 0; ky < layer.kernelHeight; ++ky)
                                    for (int kx = 0; kx < layer.kernelWidth; ++kx) {
                                        const int iy = oy * layer.stride - layer.padding + ky;
                                        const int ix = ox * layer.stride - layer.padding + kx;
                                        if (iy < 0 || iy >= in.height || ix < 0 || ix >= in.width)
                                            continue;
                                        const int wi
                                            = ((o * in.channels + c) * layer.kernelHeight + ky) * layer.kernelWidth
                                            + kx;
                                        const auto ai = static_cast<std::size_t>((c * in.height + iy) * in.width + ix);
                                        gw[wi] += d * a[ai];
                                        previous[ai] += w[wi] * d;
                                    }
                        }
                break;
            }
            case LayerKind::MaxPool:
            case LayerKind::AvgPool:
                for (int c = 0; c < outShape.channels; ++c)
                    for (int y = 0; y < outShape.height; ++y)
                        for (int x = 0; x < outShape.width; ++x) {
                            const double d
                                = delta[static_cast<std::size_t>((c * outShape.height + y) * outShape.width + x)];
                            const std::vector<std::size_t> at = window(l, c, y, x);
                            if (layer.kind == LayerKind::AvgPool) {
                                for (const std::size_t i : at)
                                    previous[i] += d / static_cast<double>(at.size());
                                continue;
                            }
                            std::size_t best = at.front();
                            for (const std::size_t i : at)
                                best = a[i] > a[best] ? i : best; // the first of equal values
                            previous[best] += d;
                        }
                break;
            case LayerKind::Activation:
                for (std::size_t i = 0; i < previous.size(); ++i)
                    previous[i] = delta[i] * derivative(layer.activation, out[i]);
                break;
            case LayerKind::Flatten:
            case LayerKind::Unflatten:
                previous = delta;
                break;
            }
            delta = std::move(previous);
        }
        return loss;
    }

    NetworkSpec m_spec;
    std::vector<TensorShape> m_shapes;
};

} // namespace sgdscope::testing
