#include "core/nn/MlpSpec.h"

namespace sgdscope {

std::string toString(Activation a)
{
    switch (a) {
    case Activation::Tanh:
        return "tanh";
    case Activation::Relu:
        return "relu";
    case Activation::Sigmoid:
        return "sigmoid";
    case Activation::Identity:
        return "identity";
    }
    return "?";
}

std::string toString(LossKind l)
{
    return l == LossKind::MeanSquaredError ? "mse" : "cross-entropy";
}

std::string toString(WeightInit w)
{
    switch (w) {
    case WeightInit::StandardNormal:
        return "normal";
    case WeightInit::He:
        return "he";
    case WeightInit::Glorot:
        return "glorot";
    }
    return "?";
}

double MlpSpec::macsPerSample() const
{
    double macs = 0.0;
    for (int l = 0; l < layerCount(); ++l)
        macs += static_cast<double>(layers[static_cast<std::size_t>(l)]) * layers[static_cast<std::size_t>(l) + 1];
    return macs;
}

} // namespace sgdscope
