// The scalar reference path: plain C++ for any x86-64 CPU (built without instruction-set flags), exactly what
// the vector paths must reproduce. std::fma is a library call here, correctly rounded with or without FMA
// hardware. KernelsScalarFma.cpp builds the same source with FMA instructions, for CPUs that have them.
#define SGDSCOPE_KERNEL_NS scalar
#define SGDSCOPE_KERNEL_NAME "scalar"
#define SGDSCOPE_KERNEL_TABLE scalarKernels
#include "core/nn/kernels/VecScalar.h"

namespace sgdscope::kernels::scalar {
using Vec = VecScalar;
constexpr int gemmRows = 4;
constexpr int gemmVectors = 4;
constexpr int treeRows = 4;
constexpr int treeVectors = 4;
constexpr int kBlockFloats = 8192;
} // namespace sgdscope::kernels::scalar

#include "core/nn/kernels/KernelsImpl.h"
