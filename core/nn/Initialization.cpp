#include "core/nn/Initialization.h"

#include "core/common/Rng.h"

#include <cmath>

namespace sgdscope {

ParamVector initialParameters(const MlpSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed)
{
    ParamVector params(layout.paddedSize(), 0.0f);
    Rng rng(seed);
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double in = spec.layers[static_cast<std::size_t>(l)];
        const double out = spec.layers[static_cast<std::size_t>(l) + 1];
        const auto& w = layout.weight(l);
        const auto& b = layout.bias(l);
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
