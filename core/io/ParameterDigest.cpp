#include "core/io/ParameterDigest.h"

#include "core/io/Sha256.h"

namespace sgdscope {

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
