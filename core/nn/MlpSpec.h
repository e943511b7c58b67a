#pragma once

#include "core/common/NamedValues.h"

#include <string>
#include <vector>

namespace sgdscope {

enum class Activation
{
    Tanh,
    Relu,
    Sigmoid,
    Identity
};
enum class LossKind
{
    MeanSquaredError,
    SoftmaxCrossEntropy
};
enum class WeightInit
{
    StandardNormal,
    He,
    Glorot
};

inline constexpr NameTable<Activation, 4> activationNames {{{"tanh", Activation::Tanh}, {"relu", Activation::Relu},
    {"sigmoid", Activation::Sigmoid}, {"identity", Activation::Identity}}};
inline constexpr NameTable<LossKind, 2> lossNames {
    {{"mse", LossKind::MeanSquaredError}, {"cross-entropy", LossKind::SoftmaxCrossEntropy}}};
inline constexpr NameTable<WeightInit, 3> weightInitNames {
    {{"normal", WeightInit::StandardNormal}, {"he", WeightInit::He}, {"glorot", WeightInit::Glorot}}};

inline std::string toString(Activation a)
{
    return nameOf(activationNames, a);
}
inline std::string toString(LossKind l)
{
    return nameOf(lossNames, l);
}
inline std::string toString(WeightInit w)
{
    return nameOf(weightInitNames, w);
}

/// A dense multi-layer perceptron: layers = {in, hidden..., out}. Every hidden layer applies
/// `activation`; the output layer is linear (logits for cross-entropy, values for MSE).
struct MlpSpec
{
    std::vector<int> layers;
    Activation activation = Activation::Tanh;
    LossKind loss = LossKind::MeanSquaredError;

    int inputs() const { return layers.front(); }
    int outputs() const { return layers.back(); }
    int layerCount() const { return static_cast<int>(layers.size()) - 1; }
    /// Multiply-adds of one sample's forward pass (the backward pass is about twice that).
    double macsPerSample() const;
    /// "784,256,10": the widths as --layers takes them.
    std::string layersText() const;
};

} // namespace sgdscope
