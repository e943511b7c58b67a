#include "core/nn/ParameterLayout.h"

namespace sgdscope {

ParameterLayout::ParameterLayout(const NetworkSpec& spec)
{
    constexpr std::size_t alignFloats = 16; // 64 bytes
    std::size_t offset = 0;
    const std::vector<TensorShape> shapes = spec.shapes();
    for (std::size_t l = 0; l < spec.layers.size(); ++l) {
        const LayerSpec& layer = spec.layers[l];
        if (!layer.weighted())
            continue;
        const auto out = static_cast<std::int64_t>(layer.outputs);
        const TensorShape& in = shapes[l];
        const std::string prefix = std::to_string(spec.moduleIndex(static_cast<int>(l))) + ".";
        for (int part = 0; part < 2; ++part) {
            Tensor t;
            t.name = prefix + (part == 0 ? "weight" : "bias");
            if (part == 1)
                t.shape = {out};
            else if (layer.kind == LayerKind::Dense)
                t.shape = {out, in.size()};
            else
                t.shape = {out, in.channels, layer.kernelHeight, layer.kernelWidth};
            t.size = 1;
            for (const std::int64_t d : t.shape)
                t.size *= static_cast<std::size_t>(d);
            t.offset = offset;
            offset += (t.size + alignFloats - 1) / alignFloats * alignFloats;
            m_count += t.size;
            m_tensors.push_back(std::move(t));
        }
    }
    m_paddedSize = offset;
}

std::vector<float> packedParameters(const ParameterLayout& layout, const float* params)
{
    std::vector<float> packed;
    packed.reserve(layout.parameterCount());
    for (const auto& t : layout.tensors())
        packed.insert(packed.end(), params + t.offset, params + t.offset + t.size);
    return packed;
}

} // namespace sgdscope
