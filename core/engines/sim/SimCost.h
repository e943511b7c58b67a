#pragma once

#include "core/nn/NetworkSpec.h"
#include "core/nn/ParameterLayout.h"

#include <cstdint>

namespace sgdscope {

/// What the simulated cluster charges for the work the math really does: floating-point operations at the
/// host's speed, and messages of the parameters' real size over the links.
struct SimCost
{
    SimCost(const NetworkSpec& spec, const ParameterLayout& layout);

    /// Forward and backward pass of one sample: 2 flops per multiply-add forward (a dense layer's inputs x
    /// outputs, a convolution's output values x channels x kh x kw), 2 for the weight gradient and 2 for the
    /// input gradient of every weighted layer but the first. Pooling, activations and copies are not counted
    /// (the local cluster's calibration measures the whole step, so their time is in its speed).
    double flopsPerSample = 0.0;
    /// Adding two gradients (a node of the reduction tree).
    double addFlops = 0.0;
    /// Applying an update: w -= lr g (2 flops per parameter), with momentum v = m v + g first (4).
    double applyFlops(bool momentum) const { return (momentum ? 4.0 : 2.0) * m_parameters; }
    /// Bytes through memory: an apply reads w, g (and v) and writes w (and v); a tree addition reads two
    /// gradients and writes one; a copy of the parameters reads and writes them once.
    double applyBytes(bool momentum) const { return (momentum ? 5.0 : 3.0) * 4.0 * m_parameters; }
    double addBytes() const { return 3.0 * 4.0 * m_parameters; }
    double copyBytes() const { return 2.0 * 4.0 * m_parameters; }
    /// A gradient or the parameters on the wire (float32).
    std::uint64_t messageBytes = 0;

private:
    double m_parameters = 0.0;
};

} // namespace sgdscope
