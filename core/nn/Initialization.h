#pragma once

#include "core/nn/NetworkSpec.h"
#include "core/nn/ParameterLayout.h"

#include <cstdint>

namespace sgdscope {

/// Draws initial parameters: StandardNormal draws every weight and bias from N(0, 1) (as the seed
/// example's tf.random_normal); He draws weights from N(0, 2/fan_in) (He et al. 2015), Glorot from U(-a, a)
/// with a = sqrt(6/(fan_in + fan_out)) (Glorot and Bengio 2010), both with zero biases. A dense layer's fan_in
/// is its inputs and fan_out its outputs; a convolution's are channels x kh x kw and outputs x kh x kw (as
/// PyTorch's torch.nn.init computes them). Tensors are drawn in layout order, row-major.
ParamVector initialParameters(
    const NetworkSpec& spec, const ParameterLayout& layout, WeightInit init, std::uint64_t seed);

} // namespace sgdscope
