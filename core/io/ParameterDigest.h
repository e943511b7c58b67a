#pragma once

#include "core/nn/ParameterLayout.h"

#include <string>

namespace sgdscope {

/// SHA-256 of the parameters' packed little-endian F32 bytes (packedParameters), as hex: params_digest.
std::string parameterDigest(const ParameterLayout& layout, const float* params);

} // namespace sgdscope
