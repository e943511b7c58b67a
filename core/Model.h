#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
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

/// Where each tensor lives in the flat parameter vector. Tensors are named and shaped as PyTorch's
/// nn.Sequential(Linear, Act, Linear, ...) state_dict: "0.weight" [out, in] (row-major), "0.bias" [out],
/// "2.weight", ... (the index counts the activation modules too). Each tensor starts on a 64-byte boundary
/// so that every worker's gradient buffer has the same alignment (part of what makes results bitwise
/// reproducible across worker counts).
class ParameterLayout
{
public:
    struct Tensor
    {
        std::string name;
        std::vector<std::int64_t> shape;
        std::size_t offset = 0; // in floats, into the padded vector
        std::size_t size = 0; // elements
    };

    ParameterLayout() = default;
    explicit ParameterLayout(const MlpSpec& spec);

    const std::vector<Tensor>& tensors() const { return m_tensors; }
    const Tensor& weight(int layer) const { return m_tensors[static_cast<std::size_t>(2 * layer)]; }
    const Tensor& bias(int layer) const { return m_tensors[static_cast<std::size_t>(2 * layer + 1)]; }
    /// Floats to allocate (including alignment padding, which stays zero).
    std::size_t paddedSize() const { return m_paddedSize; }
    /// Number of trainable parameters.
    std::size_t parameterCount() const { return m_count; }

private:
    std::vector<Tensor> m_tensors;
    std::size_t m_paddedSize = 0;
    std::size_t m_count = 0;
};

template<typename Scalar>
using AlignedVector = std::vector<Scalar, Eigen::aligned_allocator<Scalar>>;
using ParamVector = AlignedVector<float>;

/// Draws initial parameters: StandardNormal draws every weight and bias from N(0, 1) (as the seed
/// example's tf.random_normal); He draws weights from N(0, 2/in), Glorot from U(-a, a) with
/// a = sqrt(6/(in+out)), both with zero biases. Tensors are drawn in layout order, row-major.
ParamVector initialParameters(const MlpSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed);

/// The parameters as contiguous bytes in layout order without padding (little-endian F32): what
/// safetensors stores and what params_digest hashes.
std::vector<float> packedParameters(const ParameterLayout& layout, const float* params);
std::string parameterDigest(const ParameterLayout& layout, const float* params);

} // namespace sgdscope
