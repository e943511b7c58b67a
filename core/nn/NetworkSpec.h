#pragma once

#include "core/common/NamedValues.h"

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

/// What one sample is between two layers: channels x height x width, channel-major (PyTorch's CHW). A flat
/// vector of n values is n x 1 x 1 and `flat`; an image keeps its shape even when it is 1 x 1.
struct TensorShape
{
    int channels = 0;
    int height = 1;
    int width = 1;
    bool flat = true;

    static TensorShape vector(int n) { return {n, 1, 1, true}; }
    static TensorShape image(int c, int h, int w) { return {c, h, w, false}; }
    std::int64_t size() const { return static_cast<std::int64_t>(channels) * height * width; }
    /// Pixels of one channel.
    std::int64_t area() const { return static_cast<std::int64_t>(height) * width; }
    /// "784" for a vector, "6x28x28" for an image.
    std::string text() const;
    bool operator==(const TensorShape&) const = default;
};

enum class LayerKind
{
    Dense, // y = W x + b, W [outputs, inputs] (nn.Linear)
    Conv, // 2-D cross-correlation with zero padding and a stride (nn.Conv2d), W [outputs, channels, kh, kw]
    MaxPool, // the largest of each kernel x kernel window, windows side by side (nn.MaxPool2d(k))
    AvgPool, // the mean of each window (nn.AvgPool2d(k))
    Activation, // an element-wise function
    Flatten, // an image read as a vector, channel-major (nn.Flatten)
    Unflatten, // a vector read as an image of `image`'s shape (nn.Unflatten(1, shape)); only first
};

/// One layer of a network. Layers with parameters (dense and convolution) are "weighted".
struct LayerSpec
{
    LayerKind kind = LayerKind::Dense;
    int outputs = 0; // Dense: width; Conv: channels
    int kernelHeight = 1; // Conv, pools
    int kernelWidth = 1;
    int stride = 1; // Conv (a pool's stride is its kernel)
    int padding = 0; // Conv: rows and columns of zeros on every side
    Activation activation = Activation::Identity; // Activation
    TensorShape image; // Unflatten

    static LayerSpec dense(int outputs);
    static LayerSpec conv(int outputs, int kernelHeight, int kernelWidth, int stride, int padding);
    static LayerSpec pool(LayerKind kind, int kernelHeight, int kernelWidth);
    static LayerSpec activationOf(Activation a);
    static LayerSpec flatten();
    static LayerSpec unflatten(const TensorShape& image);

    bool weighted() const { return kind == LayerKind::Dense || kind == LayerKind::Conv; }
    bool operator==(const LayerSpec&) const = default;
};

/// What `layer` makes of an input of shape `in` (the layer's own checks are NetworkSpec::check()'s).
TensorShape layerOutput(const LayerSpec& layer, const TensorShape& in);

/// A feed-forward network: an input shape, layers in order and a loss on the last layer's values (logits for
/// cross-entropy, values for MSE). A multi-layer perceptron is dense layers with an activation between each
/// two (mlp()). Shapes are checked by check(): every layer fits what it reads, and the output is flat.
struct NetworkSpec
{
    TensorShape input;
    std::vector<LayerSpec> layers;
    LossKind loss = LossKind::MeanSquaredError;
    /// For messages: each layer's position in the model line it came from (1 for the first), 0 for a layer the
    /// line implies (networkFromModel); empty: layers are numbered as they are.
    std::vector<int> linePositions;

    /// widths = {in, hidden..., out}; `activation` after every hidden layer, the output layer linear.
    static NetworkSpec mlp(const std::vector<int>& widths, Activation activation, LossKind loss);

    /// shapes()[i] is what layer i reads; shapes()[layers.size()] what the network outputs. Assumes check().
    std::vector<TensorShape> shapes() const;
    /// Throws SgdError naming the first layer that does not fit ("layer 3 'conv16x5x5' (input 6x4x4): its 5x5
    /// kernel is larger than its 4x4 input", numbered as in the model line) or what is wrong with the whole.
    void check() const;

    int inputs() const { return static_cast<int>(input.size()); }
    int outputs() const;
    int weightedLayerCount() const;
    /// Dense and activation layers only, one activation function between the dense layers.
    bool isMlp() const;
    /// An MLP's widths {in, hidden..., out}.
    std::vector<int> widths() const;
    /// The activation of an MLP's hidden layers (Identity if none).
    Activation mlpActivation() const;

    /// Multiply-adds of one sample's forward pass, and of its input gradients below the first weighted layer's
    /// output (what the backward pass computes besides the weight gradients, which cost the forward pass's).
    double forwardMacsPerSample() const;
    double inputGradientMacsPerSample() const;
    /// Floats of one sample's values between layers (every layer's output, the input included).
    double valuesPerSample() const;
    /// The module index of every layer as PyTorch's nn.Sequential numbers it (every layer is one module).
    int moduleIndex(int layer) const { return layer; }
    /// The model line of the layers (ModelText.h's grammar), activations and flattens included.
    std::string text() const;
};

/// "784,256,10": widths as --layers takes them.
std::string widthsText(const std::vector<int>& widths);

} // namespace sgdscope
