#include "core/nn/ParameterLayout.h"

namespace sgdscope {

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

std::vector<float> packedParameters(const ParameterLayout& layout, const float* params)
{
    std::vector<float> packed;
    packed.reserve(layout.parameterCount());
    for (const auto& t : layout.tensors())
        packed.insert(packed.end(), params + t.offset, params + t.offset + t.size);
    return packed;
}

} // namespace sgdscope
