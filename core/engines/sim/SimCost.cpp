#include "core/engines/sim/SimCost.h"

namespace sgdscope {

SimCost::SimCost(const NetworkSpec& spec, const ParameterLayout& layout)
    : m_parameters(static_cast<double>(layout.parameterCount()))
{
    const double macs = spec.forwardMacsPerSample();
    flopsPerSample = 2.0 * macs + 2.0 * macs + 2.0 * spec.inputGradientMacsPerSample();
    addFlops = m_parameters;
    messageBytes = static_cast<std::uint64_t>(m_parameters) * sizeof(float);
}

} // namespace sgdscope
