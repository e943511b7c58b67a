#pragma once
// An MLP in double precision written as plainly as possible (loops, the C library's tanh, exp and log),
// independent of the training kernels: the reference that test gradients and trainers are checked against.

#include "core/nn/MlpWorkspace.h"
#include "core/nn/ParameterLayout.h"
#include "core/nn/SampleView.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sgdscope::testing {

class ReferenceMlp
{
public:
    explicit ReferenceMlp(MlpSpec spec)
        : m_spec(std::move(spec))
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

private:
    double activate(double z) const
    {
        switch (m_spec.activation) {
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
    double derivative(double a) const
    {
        switch (m_spec.activation) {
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

    /// One sample: its loss; adds scale * its gradient to grad (if any) and counts a correct prediction.
    double sample(const ParameterLayout& layout, const double* params, const SampleView<double>& data,
        std::int64_t index, double scale, double* grad, std::int64_t* correct) const
    {
        const int layers = m_spec.layerCount();
        // act: every layer's values one after another, layer l from offset[l]
        std::vector<std::size_t> offset {0};
        for (const int width : m_spec.layers)
            offset.push_back(offset.back() + static_cast<std::size_t>(width));
        std::vector<double> act(offset.back(), 0.0);
        double* values = act.data();
        for (int f = 0; f < data.features; ++f)
            values[f] = data.inputs[index * data.features + f];
        for (int l = 0; l < layers; ++l) {
            const int in = m_spec.layers[static_cast<std::size_t>(l)];
            const int out = m_spec.layers[static_cast<std::size_t>(l) + 1];
            const double* w = params + layout.weight(l).offset;
            const double* b = params + layout.bias(l).offset;
            const double* a = values + offset[static_cast<std::size_t>(l)];
            double* z = values + offset[static_cast<std::size_t>(l) + 1];
            for (int o = 0; o < out; ++o) {
                double sum = b[o];
                for (int i = 0; i < in; ++i)
                    sum += w[o * in + i] * a[i];
                z[o] = l + 1 < layers ? activate(sum) : sum;
            }
        }
        const double* z = values + offset[static_cast<std::size_t>(layers)];
        const int outputs = m_spec.outputs();
        std::vector<double> deltaStore(static_cast<std::size_t>(outputs), 0.0);
        double* delta = deltaStore.data();
        double loss = 0.0;
        if (m_spec.loss == LossKind::MeanSquaredError) {
            for (int o = 0; o < outputs; ++o) {
                const double diff = z[o] - data.targets[index * outputs + o];
                loss += diff * diff;
                delta[o] = 2.0 * diff * scale;
            }
        } else {
            const std::int32_t label = data.labels[index];
            int best = 0;
            for (int o = 1; o < outputs; ++o)
                best = z[o] > z[best] ? o : best;
            const double peak = z[best];
            double sum = 0.0;
            for (int o = 0; o < outputs; ++o)
                sum += std::exp(z[o] - peak);
            loss = std::log(sum) + peak - z[label];
            for (int o = 0; o < outputs; ++o)
                delta[o] = (std::exp(z[o] - peak) / sum - (o == label ? 1.0 : 0.0)) * scale;
            if (correct)
                *correct += best == label ? 1 : 0;
        }
        if (!grad)
            return loss;
        for (int l = layers - 1; l >= 0; --l) {
            const int in = m_spec.layers[static_cast<std::size_t>(l)];
            const int out = m_spec.layers[static_cast<std::size_t>(l) + 1];
            const double* w = params + layout.weight(l).offset;
            double* gw = grad + layout.weight(l).offset;
            double* gb = grad + layout.bias(l).offset;
            const double* a = values + offset[static_cast<std::size_t>(l)];
            std::vector<double> previousStore(static_cast<std::size_t>(in), 0.0);
            double* previous = previousStore.data();
            for (int o = 0; o < out; ++o) {
                const double d = delta[o];
                gb[o] += d;
                for (int i = 0; i < in; ++i) {
                    gw[o * in + i] += d * a[i];
                    previous[i] += w[o * in + i] * d;
                }
            }
            if (l > 0) {
                for (int i = 0; i < in; ++i)
                    previous[i] *= derivative(a[i]);
            }
            deltaStore = std::move(previousStore);
            delta = deltaStore.data();
        }
        return loss;
    }

    MlpSpec m_spec;
};

} // namespace sgdscope::testing
