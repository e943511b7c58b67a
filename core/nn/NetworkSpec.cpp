#include "core/nn/NetworkSpec.h"

#include "core/common/Error.h"
#include "core/nn/ModelText.h"

#include <limits>

namespace sgdscope {

namespace {
/// The most values one sample may have between two layers (the workspace's buffers are indexed in 32 bits per
/// channel of a pass).
constexpr std::int64_t mostValuesPerSample = std::int64_t(1) << 26;
} // namespace

LayerSpec LayerSpec::dense(int outputs)
{
    LayerSpec l;
    l.kind = LayerKind::Dense;
    l.outputs = outputs;
    return l;
}

LayerSpec LayerSpec::conv(int outputs, int kernelHeight, int kernelWidth, int stride, int padding)
{
    LayerSpec l;
    l.kind = LayerKind::Conv;
    l.outputs = outputs;
    l.kernelHeight = kernelHeight;
    l.kernelWidth = kernelWidth;
    l.stride = stride;
    l.padding = padding;
    return l;
}

LayerSpec LayerSpec::pool(LayerKind kind, int kernelHeight, int kernelWidth)
{
    LayerSpec l;
    l.kind = kind;
    l.kernelHeight = kernelHeight;
    l.kernelWidth = kernelWidth;
    return l;
}

LayerSpec LayerSpec::activationOf(Activation a)
{
    LayerSpec l;
    l.kind = LayerKind::Activation;
    l.activation = a;
    return l;
}

LayerSpec LayerSpec::flatten()
{
    LayerSpec l;
    l.kind = LayerKind::Flatten;
    return l;
}

LayerSpec LayerSpec::unflatten(const TensorShape& image)
{
    LayerSpec l;
    l.kind = LayerKind::Unflatten;
    l.image = image;
    return l;
}

std::string TensorShape::text() const
{
    if (flat)
        return std::to_string(channels);
    return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

NetworkSpec NetworkSpec::mlp(const std::vector<int>& widths, Activation activation, LossKind loss)
{
    NetworkSpec spec;
    spec.loss = loss;
    spec.input = TensorShape::vector(widths.empty() ? 0 : widths.front());
    for (std::size_t i = 1; i < widths.size(); ++i) {
        if (i > 1)
            spec.layers.push_back(LayerSpec::activationOf(activation));
        spec.layers.push_back(LayerSpec::dense(widths[i]));
    }
    return spec;
}

TensorShape layerOutput(const LayerSpec& l, const TensorShape& in)
{
    switch (l.kind) {
    case LayerKind::Dense:
        return TensorShape::vector(l.outputs);
    case LayerKind::Conv:
        return TensorShape::image(l.outputs, (in.height + 2 * l.padding - l.kernelHeight) / l.stride + 1,
            (in.width + 2 * l.padding - l.kernelWidth) / l.stride + 1);
    case LayerKind::MaxPool:
    case LayerKind::AvgPool:
        return TensorShape::image(in.channels, in.height / l.kernelHeight, in.width / l.kernelWidth);
    case LayerKind::Activation:
        break;
    case LayerKind::Flatten:
        return TensorShape::vector(static_cast<int>(in.size()));
    case LayerKind::Unflatten:
        return l.image;
    }
    return in;
}

std::vector<TensorShape> NetworkSpec::shapes() const
{
    std::vector<TensorShape> shapes {input};
    for (const LayerSpec& l : layers)
        shapes.push_back(layerOutput(l, shapes.back()));
    return shapes;
}

void NetworkSpec::check() const
{
    if (input.channels < 1 || input.height < 1 || input.width < 1)
        throw SgdError("the input has no values (" + input.text() + ")");
    if (weightedLayerCount() == 0)
        throw SgdError("the model has no dense or convolution layer, so nothing to train");
    TensorShape in = input;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const LayerSpec& l = layers[i];
        const int position = linePositions.empty() ? static_cast<int>(i) + 1 : linePositions[i];
        const std::string name = (position > 0 ? "layer " + std::to_string(position) + " '" + layerText(l) + "'"
                                               : "the implied '" + layerText(l) + "'")
            + " (input " + in.text() + ")";
        auto refuse = [&](const std::string& why) { throw SgdError(name + ": " + why); };
        switch (l.kind) {
        case LayerKind::Dense:
            if (!in.flat)
                refuse("a dense layer reads a vector; flatten the image first");
            if (l.outputs < 1)
                refuse("needs at least one output");
            break;
        case LayerKind::Conv: {
            if (in.flat)
                refuse("a convolution reads an image, but its input is a vector; begin the model with input"
                       "CxHxW (channels x height x width) if the data's features are an image");
            if (l.outputs < 1 || l.kernelHeight < 1 || l.kernelWidth < 1 || l.stride < 1 || l.padding < 0)
                refuse("needs at least one channel, a kernel of at least 1x1, a stride of at least 1 and a padding "
                       "of at least 0");
            if (l.padding >= l.kernelHeight || l.padding >= l.kernelWidth)
                refuse("its padding " + std::to_string(l.padding) + " is not smaller than its "
                    + std::to_string(l.kernelHeight) + "x" + std::to_string(l.kernelWidth)
                    + " kernel: some outputs would see padding only");
            const int height = in.height + 2 * l.padding;
            const int width = in.width + 2 * l.padding;
            if (l.kernelHeight > height || l.kernelWidth > width)
                refuse("its " + std::to_string(l.kernelHeight) + "x" + std::to_string(l.kernelWidth)
                    + " kernel is larger than its " + std::to_string(in.height) + "x" + std::to_string(in.width)
                    + " input"
                    + (l.padding > 0 ? " padded to " + std::to_string(height) + "x" + std::to_string(width) : ""));
            break;
        }
        case LayerKind::MaxPool:
        case LayerKind::AvgPool:
            if (in.flat)
                refuse("a pool reads an image, but its input is a vector");
            if (l.kernelHeight < 1 || l.kernelWidth < 1)
                refuse("needs a window of at least 1x1");
            if (l.kernelHeight > in.height || l.kernelWidth > in.width)
                refuse("its " + std::to_string(l.kernelHeight) + "x" + std::to_string(l.kernelWidth)
                    + " window is larger than its " + std::to_string(in.height) + "x" + std::to_string(in.width)
                    + " input");
            if (in.height % l.kernelHeight != 0 || in.width % l.kernelWidth != 0)
                refuse("its " + std::to_string(l.kernelHeight) + "x" + std::to_string(l.kernelWidth)
                    + " windows do not divide its " + std::to_string(in.height) + "x" + std::to_string(in.width)
                    + " input (windows lie side by side and cover it)");
            break;
        case LayerKind::Activation:
            break;
        case LayerKind::Flatten:
            if (in.flat)
                refuse("its input is already a vector");
            break;
        case LayerKind::Unflatten:
            if (i != 0)
                refuse("the input's shape can only be given first");
            if (!in.flat || l.image.size() != in.size())
                refuse("an image of " + l.image.text() + " has " + std::to_string(l.image.size())
                    + " values, but each sample has " + std::to_string(in.size()));
            break;
        }
        const TensorShape out = layerOutput(l, in);
        if (out.size() > mostValuesPerSample)
            refuse("its output of " + out.text() + " values per sample is more than allowed ("
                + std::to_string(mostValuesPerSample) + ")");
        in = out;
    }
    if (!in.flat)
        throw SgdError("the model's output is an image (" + in.text() + "); end it with a flatten or a dense layer");
}

int NetworkSpec::outputs() const
{
    return static_cast<int>(shapes().back().size());
}

int NetworkSpec::weightedLayerCount() const
{
    int n = 0;
    for (const LayerSpec& l : layers)
        n += l.weighted() ? 1 : 0;
    return n;
}

bool NetworkSpec::isMlp() const
{
    if (!input.flat || layers.empty())
        return false;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const bool dense = i % 2 == 0;
        if (layers[i].kind != (dense ? LayerKind::Dense : LayerKind::Activation))
            return false;
        if (!dense && layers[i].activation != layers[1].activation)
            return false;
    }
    return layers.back().kind == LayerKind::Dense;
}

std::vector<int> NetworkSpec::widths() const
{
    std::vector<int> widths {inputs()};
    for (const LayerSpec& l : layers) {
        if (l.kind == LayerKind::Dense)
            widths.push_back(l.outputs);
    }
    return widths;
}

Activation NetworkSpec::mlpActivation() const
{
    for (const LayerSpec& l : layers) {
        if (l.kind == LayerKind::Activation)
            return l.activation;
    }
    return Activation::Identity;
}

double NetworkSpec::forwardMacsPerSample() const
{
    const std::vector<TensorShape> s = shapes();
    double macs = 0.0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const LayerSpec& l = layers[i];
        if (l.kind == LayerKind::Dense)
            macs += static_cast<double>(s[i].size()) * l.outputs;
        else if (l.kind == LayerKind::Conv)
            macs += static_cast<double>(s[i + 1].size()) * s[i].channels * l.kernelHeight * l.kernelWidth;
    }
    return macs;
}

double NetworkSpec::inputGradientMacsPerSample() const
{
    const std::vector<TensorShape> s = shapes();
    double macs = 0.0;
    bool below = false; // a weighted layer below this one: its input's gradient is needed
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const LayerSpec& l = layers[i];
        if (!l.weighted())
            continue;
        if (below) {
            if (l.kind == LayerKind::Dense)
                macs += static_cast<double>(s[i].size()) * l.outputs;
            else
                macs += static_cast<double>(s[i + 1].size()) * s[i].channels * l.kernelHeight * l.kernelWidth;
        }
        below = true;
    }
    return macs;
}

double NetworkSpec::valuesPerSample() const
{
    double values = 0.0;
    for (const TensorShape& s : shapes())
        values += static_cast<double>(s.size());
    return values;
}

std::string NetworkSpec::text() const
{
    return modelText(layers);
}

std::string widthsText(const std::vector<int>& widths)
{
    std::string text;
    for (std::size_t i = 0; i < widths.size(); ++i)
        text += (i ? "," : "") + std::to_string(widths[i]);
    return text;
}

} // namespace sgdscope
