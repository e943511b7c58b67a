// The AVX2 + FMA path (built with -mavx2 -mfma for this file only; chosen at run time when the CPU has both).
// Tiles: 6 x 16 for the products (12 accumulators, 2 panel vectors, 1 broadcast: 15 of 16 registers).
#define SGDSCOPE_KERNEL_NS avx2
#define SGDSCOPE_KERNEL_NAME "avx2"
#define SGDSCOPE_KERNEL_TABLE avx2Kernels
#include "core/nn/kernels/VecAvx2.h"

namespace sgdscope::kernels::avx2 {
using Vec = VecAvx2;
constexpr int gemmRows = 6;
constexpr int gemmVectors = 2;
constexpr int treeRows = 6;
constexpr int treeVectors = 2;
constexpr int kBlockFloats = 4096; // 16 KB panels
} // namespace sgdscope::kernels::avx2

#include "core/nn/kernels/KernelsImpl.h"
