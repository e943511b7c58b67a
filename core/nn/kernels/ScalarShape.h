#pragma once
// The scalar path's register blocking, shared by its two builds (KernelsScalar.cpp, KernelsScalarFma.cpp):
// included after SGDSCOPE_KERNEL_NS is defined, before KernelsImpl.h.
#include "core/nn/kernels/VecScalar.h"

namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS {
using Vec = VecScalar;
constexpr int gemmRows = 4;
constexpr int gemmVectors = 3;
constexpr int treeRows = 4;
constexpr int treeVectors = 4;
constexpr int kBlockFloats = 8192;
} // namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS
