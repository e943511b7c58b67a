#include "core/engines/sim/SimCost.h"

namespace sgdscope {

SimCost::SimCost(const MlpSpec& spec, const ParameterLayout& layout)
    : m_parameters(static_cast<double>(layout.parameterCount()))
{
    double macs = 0.0;
    double inputGradientMacs = 0.0;
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double m = static_cast<double>(spec.layers[static_cast<std::size_t>(l)])
            * spec.layers[static_cast<std::size_t>(l) + 1];
        macs += m;
        if (l > 0)
            inputGradientMacs += m;
    }
    flopsPerSample = 2.0 * macs + 2.0 * macs + 2.0 * inputGradientMacs;
    addFlops = m_parameters;
    messageBytes = static_cast<std::uint64_t>(m_parameters) * sizeof(float);
}

} // namespace sgdscope
