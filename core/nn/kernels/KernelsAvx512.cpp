// The AVX-512 path (built with -mavx512f for this file only; chosen at run time when the CPU has AVX-512F).
// Tiles: 6 x 64 for the products (24 accumulators, 4 panel vectors), 12 x 32 for the weight gradients.
#define SGDSCOPE_KERNEL_NS avx512
#define SGDSCOPE_KERNEL_NAME "avx512"
#define SGDSCOPE_KERNEL_TABLE avx512Kernels
#include "core/nn/kernels/VecAvx512.h"

namespace sgdscope::kernels::avx512 {
using Vec = VecAvx512;
constexpr int gemmRows = 6;
constexpr int gemmVectors = 4;
constexpr int treeRows = 12;
constexpr int treeVectors = 2;
constexpr int kBlockFloats = 8192; // 32 KB panels
} // namespace sgdscope::kernels::avx512

#include "core/nn/kernels/KernelsImpl.h"
