#pragma once

#include "core/nn/MlpSpec.h"
#include "core/nn/ParameterLayout.h"

#include <cstdint>

namespace sgdscope {

/// Draws initial parameters: StandardNormal draws every weight and bias from N(0, 1) (as the seed
/// example's tf.random_normal); He draws weights from N(0, 2/in), Glorot from U(-a, a) with
/// a = sqrt(6/(in+out)), both with zero biases. Tensors are drawn in layout order, row-major.
ParamVector initialParameters(const MlpSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed);

} // namespace sgdscope
