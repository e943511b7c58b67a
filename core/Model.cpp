#include "core/Model.h"

#include "core/Rng.h"
#include "core/Sha256.h"

#include <cmath>
#include <cstring>

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

ParameterLayout::ParameterLayout(const MlpSpec& spec)
{
    constexpr std::size_t alignFloats = 16; // 64 bytes
    std::size_t offset = 0;
    for (int l = 0; l < spec.layerCount(); ++l) {
        const auto in = static_cast<std::int64_t>(spec.layers[static_cast<std::size_t>(l)]);
        const auto out = static_cast<std::int64_t>(spec.layers[static_cast<std::size_t>(l) + 1]);
        const std::string prefix = std::to_string(2 * l) + ".";
        for (int part = 0; part < 2; ++part) {
            Tensor t;
            t.name = prefix + (part == 0 ? "weight" : "bias");
            t.shape = part == 0 ? std::vector<std::int64_t> {out, in} : std::vector<std::int64_t> {out};
            t.size = static_cast<std::size_t>(part == 0 ? out * in : out);
            t.offset = offset;
            offset += (t.size + alignFloats - 1) / alignFloats * alignFloats;
            m_count += t.size;
            m_tensors.push_back(std::move(t));
        }
    }
    m_paddedSize = offset;
}

ParamVector initialParameters(const MlpSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed)
{
    ParamVector params(layout.paddedSize(), 0.0f);
    Rng rng(seed);
    for (int l = 0; l < spec.layerCount(); ++l) {
        const double in = spec.layers[static_cast<std::size_t>(l)];
        const double out = spec.layers[static_cast<std::size_t>(l) + 1];
        const auto& w = layout.weight(l);
        const auto& b = layout.bias(l);
        switch (init) {
        case WeightInit::StandardNormal:
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(rng.normal());
            for (std::size_t i = 0; i < b.size; ++i)
                params[b.offset + i] = static_cast<float>(rng.normal());
            break;
        case WeightInit::He: {
            const double sd = std::sqrt(2.0 / in);
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(sd * rng.normal());
            break;
        }
        case WeightInit::Glorot: {
            const double a = std::sqrt(6.0 / (in + out));
            for (std::size_t i = 0; i < w.size; ++i)
                params[w.offset + i] = static_cast<float>(a * (2.0 * rng.uniform() - 1.0));
            break;
        }
        }
    }
    return params;
}

std::vector<float> packedParameters(const ParameterLayout& layout, const float* params)
{
    std::vector<float> packed;
    packed.reserve(layout.parameterCount());
    for (const auto& t : layout.tensors())
        packed.insert(packed.end(), params + t.offset, params + t.offset + t.size);
    return packed;
}

std::string parameterDigest(const ParameterLayout& layout, const float* params)
{
    Sha256 sha;
    for (const auto& t : layout.tensors()) {
        // Little-endian bytes, as in the safetensors file (this machine is little-endian).
        sha.update(params + t.offset, t.size * sizeof(float));
    }
    return sha.finishHex();
}

} // namespace sgdscope
