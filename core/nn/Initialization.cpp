#include "core/nn/Initialization.h"

#include "core/common/Rng.h"

#include <cmath>

namespace sgdscope {

ParamVector initialParameters(
    const NetworkSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed)
{
    ParamVector params(layout.paddedSize(), 0.0f);
    Rng rng(seed);
    const std::vector<TensorShape> shapes = spec.shapes();
    int weighted = 0;
    for (std::size_t l = 0; l < spec.layers.size(); ++l) {
        const LayerSpec& layer = spec.layers[l];
        if (!layer.weighted())
            continue;
        const double area = layer.kind == LayerKind::Conv ? double(layer.kernelHeight) * layer.kernelWidth : 1.0;
        const double in = (layer.kind == LayerKind::Conv ? shapes[l].channels : double(shapes[l].size())) * area;
        const double out = layer.outputs * area;
        const auto& w = layout.weight(weighted);
        const auto& b = layout.bias(weighted);
        ++weighted;
        switch (init) {
        case WeightInit::StandardNormal:
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(rng.normal());
            for (std::size_t i = 0; i < b.size; ++i)
                params[b.offset + i] = static_cast<float>(rng.normal());
            break;
        case WeightInit::He: {
            const double sd = std::sqrt(2.0 / in);
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(sd * rng.normal());
            break;
        }
        case WeightInit::Glorot: {
            const double a = std::sqrt(6.0 / (in + out));
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(a * (2.0 * rng.uniform() - 1.0));
            break;
        }
        }
    }
    return params;
}

} // namespace sgdscope
