#include "core/nn/MlpSpec.h"

namespace sgdscope {

double MlpSpec::macsPerSample() const
{
    double macs = 0.0;
    for (int l = 0; l < layerCount(); ++l)
        macs += static_cast<double>(layers[static_cast<std::size_t>(l)]) * layers[static_cast<std::size_t>(l) + 1];
    return macs;
}

std::string MlpSpec::layersText() const
{
    std::string text;
    for (std::size_t i = 0; i < layers.size(); ++i)
        text += (i ? "," : "") + std::to_string(layers[i]);
    return text;
}

} // namespace sgdscope
