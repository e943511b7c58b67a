#pragma once
// What the kernel tests share: every instruction-set path's table, random data with exact zeros, bit-for-bit
// comparison, and the canonical reduction tree written independently of ReductionPlan.

#include "core/common/Rng.h"
#include "core/nn/kernels/Isa.h"
#include "core/nn/kernels/KernelTable.h"

#include <QString>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace sgdscope::testing {

struct Path
{
    const char* name;
    const kernels::KernelTable* table;
    bool supported;
};

/// Every table in the binary: both builds of the scalar reference, AVX2 and AVX-512 where this CPU has them.
inline std::vector<Path> paths()
{
    return {{"scalar", &kernels::scalarKernels, true},
        {"scalar-fma", &kernels::scalarFmaKernels, __builtin_cpu_supports("fma") != 0},
        {"avx2", &kernels::avx2Kernels, isaSupported(Isa::Avx2)},
        {"avx512", &kernels::avx512Kernels, isaSupported(Isa::Avx512)}};
}

inline std::vector<float> randomFloats(std::size_t n, Rng& rng, double scale = 1.0)
{
    std::vector<float> v(n + 64); // the kernels may read a vector past the end
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<float>(scale * rng.normal());
    // Exact zeros and values of opposite signs: sums that cancel, and the sign of a zero result.
    for (std::size_t i = 0; i < n; i += 7)
        v[i] = 0.0f;
    return v;
}

inline std::uint32_t bits(float x)
{
    std::uint32_t u = 0;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

/// The same bits, or both NaN (a NaN's payload may depend on the order of an instruction's operands).
inline bool sameFloat(float a, float b)
{
    return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b));
}

inline QString firstDifference(const float* got, const float* want, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        if (!sameFloat(got[i], want[i]))
            return QStringLiteral("element %1: %2 instead of %3").arg(i).arg(got[i], 0, 'g', 9).arg(want[i], 0, 'g', 9);
    }
    return {};
}

/// The canonical tree over chunks [lo, lo + size) cut at `count`, each leaf an fma chain of its samples from 0.
inline float treeValue(int lo, int size, int count, const std::function<float(int)>& leaf)
{
    if (size == 1)
        return leaf(lo);
    const int half = size / 2;
    if (lo + half >= count)
        return treeValue(lo, half, count, leaf);
    const float left = treeValue(lo, half, count, leaf);
    const float right = treeValue(lo + half, half, count, leaf);
    return left + right;
}

inline float canonicalTree(int count, const std::function<float(int)>& leaf)
{
    int size = 1;
    while (size < count)
        size *= 2;
    return treeValue(0, size, count, leaf);
}

} // namespace sgdscope::testing
