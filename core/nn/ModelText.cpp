#include "core/nn/ModelText.h"

#include "core/common/Error.h"

#include <cctype>

namespace sgdscope {

namespace {

constexpr int mostWidth = 1 << 20; // outputs of a dense layer, channels of a convolution
constexpr int mostKernel = 1 << 12; // a kernel's or a window's side, a stride, a padding, an image's side

const char* const grammar = "use denseN, convCxK[xK][sS][pP], maxpoolK[xK], avgpoolK[xK], relu, tanh, sigmoid, "
                            "identity, flatten, or first inputCxHxW (e.g. conv6x5x5p2,maxpool2,dense10)";

/// Reads digits at `pos` as a number from 1 to `most`; false if there are none or it is out of range.
bool readNumber(const std::string& s, std::size_t& pos, int most, int& value, int least = 1)
{
    if (pos >= s.size() || !std::isdigit(static_cast<unsigned char>(s[pos])))
        return false;
    long long v = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        v = v * 10 + (s[pos] - '0');
        if (v > most)
            return false;
        ++pos;
    }
    if (v < least)
        return false;
    value = static_cast<int>(v);
    return true;
}

bool startsWith(const std::string& s, const char* prefix, std::size_t& pos)
{
    const std::string p(prefix);
    if (s.compare(0, p.size(), p) != 0)
        return false;
    pos = p.size();
    return true;
}

/// "5" or "5x3": a kernel's or a window's height and width.
bool readWindow(const std::string& s, std::size_t& pos, int& height, int& width)
{
    if (!readNumber(s, pos, mostKernel, height))
        return false;
    width = height;
    if (pos < s.size() && s[pos] == 'x') {
        ++pos;
        return readNumber(s, pos, mostKernel, width);
    }
    return true;
}

LayerSpec parseLayer(const std::string& token, std::size_t index)
{
    auto refuse = [&](const std::string& why) -> LayerSpec {
        throw SgdError("layer " + std::to_string(index + 1) + " '" + token + "': " + why);
    };
    for (const auto& entry : activationNames) {
        if (token == entry.name)
            return LayerSpec::activationOf(entry.value);
    }
    if (token == "flatten")
        return LayerSpec::flatten();
    LayerSpec l;
    std::size_t pos = 0;
    if (startsWith(token, "dense", pos)) {
        l.kind = LayerKind::Dense;
        if (!readNumber(token, pos, mostWidth, l.outputs) || pos != token.size())
            return refuse("a dense layer is denseN, N outputs from 1 to " + std::to_string(mostWidth));
        return l;
    }
    if (startsWith(token, "conv", pos)) {
        l.kind = LayerKind::Conv;
        const std::string form = "a convolution is convCxK[xK][sS][pP]: C output channels (1 to "
            + std::to_string(mostWidth) + "), a K x K kernel, stride S, padding P (e.g. conv6x5x5p2)";
        if (!readNumber(token, pos, mostWidth, l.outputs) || pos >= token.size() || token[pos] != 'x')
            return refuse(form);
        ++pos;
        if (!readWindow(token, pos, l.kernelHeight, l.kernelWidth))
            return refuse(form);
        bool stride = false;
        bool padding = false;
        while (pos < token.size()) {
            const char c = token[pos++];
            if (c == 's' && !stride && readNumber(token, pos, mostKernel, l.stride))
                stride = true;
            else if (c == 'p' && !padding && readNumber(token, pos, mostKernel, l.padding, 0))
                padding = true;
            else
                return refuse(form);
        }
        return l;
    }
    const bool max = startsWith(token, "maxpool", pos);
    if (max || startsWith(token, "avgpool", pos)) {
        l.kind = max ? LayerKind::MaxPool : LayerKind::AvgPool;
        if (!readWindow(token, pos, l.kernelHeight, l.kernelWidth) || pos != token.size())
            return refuse(std::string("a pool is ") + (max ? "max" : "avg") + "poolK or " + (max ? "max" : "avg")
                + "poolKxK2, windows of K x K2 side by side");
        return l;
    }
    if (startsWith(token, "input", pos)) {
        l.kind = LayerKind::Unflatten;
        int c = 0;
        int h = 0;
        int w = 0;
        const bool ok = readNumber(token, pos, mostWidth, c) && pos < token.size() && token[pos++] == 'x'
            && readNumber(token, pos, mostKernel, h) && pos < token.size() && token[pos++] == 'x'
            && readNumber(token, pos, mostKernel, w) && pos == token.size();
        if (!ok)
            return refuse("the input's shape is inputCxHxW: C channels of H x W pixels (e.g. input1x28x28)");
        if (index != 0)
            return refuse("the input's shape can only be given first");
        l.image = TensorShape::image(c, h, w);
        return l;
    }
    return refuse(std::string("not a layer; ") + grammar);
}

bool makesImage(LayerKind k)
{
    return k == LayerKind::Conv || k == LayerKind::MaxPool || k == LayerKind::AvgPool || k == LayerKind::Unflatten;
}

} // namespace

std::vector<LayerSpec> parseModelText(const std::string& text)
{
    std::vector<LayerSpec> layers;
    std::size_t start = 0;
    std::size_t index = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        std::string token = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front())))
            token.erase(token.begin());
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
            token.pop_back();
        if (token.empty())
            throw SgdError("layer " + std::to_string(index + 1) + " is empty; " + grammar);
        layers.push_back(parseLayer(token, index));
        ++index;
        if (layers.size() > 256)
            throw SgdError("more than 256 layers");
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return layers;
}

std::string layerText(const LayerSpec& l)
{
    auto window = [&] {
        return std::to_string(l.kernelHeight)
            + (l.kernelWidth == l.kernelHeight ? "" : "x" + std::to_string(l.kernelWidth));
    };
    switch (l.kind) {
    case LayerKind::Dense:
        return "dense" + std::to_string(l.outputs);
    case LayerKind::Conv:
        return "conv" + std::to_string(l.outputs) + "x" + std::to_string(l.kernelHeight) + "x"
            + std::to_string(l.kernelWidth) + (l.stride != 1 ? "s" + std::to_string(l.stride) : "")
            + (l.padding != 0 ? "p" + std::to_string(l.padding) : "");
    case LayerKind::MaxPool:
        return "maxpool" + window();
    case LayerKind::AvgPool:
        return "avgpool" + window();
    case LayerKind::Activation:
        return toString(l.activation);
    case LayerKind::Flatten:
        return "flatten";
    case LayerKind::Unflatten:
        return "input" + l.image.text();
    }
    return {};
}

std::string modelText(const std::vector<LayerSpec>& layers)
{
    std::string text;
    for (const LayerSpec& l : layers)
        text += (text.empty() ? "" : ",") + layerText(l);
    return text;
}

bool namesActivations(const std::vector<LayerSpec>& layers)
{
    for (const LayerSpec& l : layers) {
        if (l.kind == LayerKind::Activation)
            return true;
    }
    return false;
}

NetworkSpec networkFromModel(
    const std::vector<LayerSpec>& written, const TensorShape& data, Activation activation, LossKind loss)
{
    NetworkSpec spec;
    spec.loss = loss;
    spec.input = TensorShape::vector(static_cast<int>(data.size()));
    const bool implicitActivations = !namesActivations(written);
    int lastWeighted = -1;
    for (std::size_t i = 0; i < written.size(); ++i)
        lastWeighted = written[i].weighted() ? static_cast<int>(i) : lastWeighted;
    // Image layers before any vector layer read the data as an image: its own shape unless the line gives one.
    if (!data.flat && (written.empty() || written.front().kind != LayerKind::Unflatten)) {
        for (const LayerSpec& l : written) {
            if (l.kind == LayerKind::Dense || l.kind == LayerKind::Flatten)
                break;
            if (makesImage(l.kind)) {
                spec.layers.push_back(LayerSpec::unflatten(data));
                spec.linePositions.push_back(0);
                break;
            }
        }
    }
    bool image = !spec.layers.empty(); // (the reshape just added)
    for (std::size_t i = 0; i < written.size(); ++i) {
        const LayerSpec& l = written[i];
        if (l.kind == LayerKind::Dense && image) {
            spec.layers.push_back(LayerSpec::flatten());
            spec.linePositions.push_back(0);
        }
        spec.layers.push_back(l);
        spec.linePositions.push_back(static_cast<int>(i) + 1);
        if (makesImage(l.kind))
            image = true;
        else if (l.kind == LayerKind::Dense || l.kind == LayerKind::Flatten)
            image = false;
        if (implicitActivations && l.weighted() && static_cast<int>(i) != lastWeighted) {
            spec.layers.push_back(LayerSpec::activationOf(activation));
            spec.linePositions.push_back(0);
        }
    }
    if (image) {
        spec.layers.push_back(LayerSpec::flatten());
        spec.linePositions.push_back(0);
    }
    return spec;
}

} // namespace sgdscope
