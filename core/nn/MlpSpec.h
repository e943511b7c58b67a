#pragma once

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

std::string toString(Activation a);
std::string toString(LossKind l);
std::string toString(WeightInit w);

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
};

} // namespace sgdscope
