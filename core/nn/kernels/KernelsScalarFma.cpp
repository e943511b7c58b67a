// The scalar reference path again, the same source built with -mfma: std::fma becomes one instruction instead
// of a library call (the same correctly rounded result, some twenty times faster). activeKernels() takes it for
// the scalar path where the CPU has FMA; tests/test_kernels.cpp checks that both builds agree bit for bit.
#define SGDSCOPE_KERNEL_NS scalarfma
#define SGDSCOPE_KERNEL_NAME "scalar"
#define SGDSCOPE_KERNEL_TABLE scalarFmaKernels
#include "core/nn/kernels/VecScalar.h"

namespace sgdscope::kernels::scalarfma {
using Vec = VecScalar;
constexpr int gemmRows = 4;
constexpr int gemmVectors = 4;
constexpr int treeRows = 4;
constexpr int treeVectors = 4;
constexpr int kBlockFloats = 8192;
} // namespace sgdscope::kernels::scalarfma

#include "core/nn/kernels/KernelsImpl.h"
