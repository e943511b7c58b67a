#pragma once

// Eight float lanes in a 256-bit register (AVX2 with FMA3). The same operations as VecScalar, lane by lane.

#include "core/common/PortableMath.h"

#include <immintrin.h>

namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS {

struct VecAvx2
{
    static constexpr int width = 8;
    __m256 v;

    VecAvx2() = default;
    VecAvx2(__m256 x)
        : v(x)
    {
    }
    explicit VecAvx2(float x)
        : v(_mm256_set1_ps(x))
    {
    }

    static __m256i maskOf(int n)
    {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static VecAvx2 zero() { return {_mm256_setzero_ps()}; }
    static VecAvx2 load(const float* p) { return {_mm256_loadu_ps(p)}; }
    static VecAvx2 broadcast(const float* p) { return {_mm256_broadcast_ss(p)}; }
    static VecAvx2 loadPartial(const float* p, int n)
    {
        return {n >= width ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, maskOf(n))};
    }
    static VecAvx2 fma(VecAvx2 a, VecAvx2 b, VecAvx2 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
    static VecAvx2 add(VecAvx2 a, VecAvx2 b) { return {_mm256_add_ps(a.v, b.v)}; }
    void store(float* p) const { _mm256_storeu_ps(p, v); }
    void storePartial(float* p, int n) const
    {
        if (n >= width)
            _mm256_storeu_ps(p, v);
        else
            _mm256_maskstore_ps(p, maskOf(n), v);
    }
};

struct MaskAvx2
{
    __m256 m;
};

inline VecAvx2 operator+(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_add_ps(a.v, b.v)};
}
inline VecAvx2 operator-(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_sub_ps(a.v, b.v)};
}
inline VecAvx2 operator*(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_mul_ps(a.v, b.v)};
}
inline VecAvx2 operator/(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_div_ps(a.v, b.v)};
}
inline VecAvx2 operator-(VecAvx2 a)
{
    return {_mm256_xor_ps(a.v, _mm256_set1_ps(-0.0f))}; // the sign flipped, as -x on a float
}
inline MaskAvx2 operator<(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; // false for NaN, as on floats
}
inline MaskAvx2 operator>(VecAvx2 a, VecAvx2 b)
{
    return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)};
}
inline VecAvx2 select(MaskAvx2 condition, VecAvx2 a, VecAvx2 b)
{
    return {_mm256_blendv_ps(b.v, a.v, condition.m)};
}
inline VecAvx2 powerOfTwoFrom(VecAvx2 shifted, float magic)
{
    const __m256i n = _mm256_sub_epi32(
        _mm256_castps_si256(shifted.v), _mm256_set1_epi32(static_cast<int>(portable::bitsOf(magic))));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23))};
}

} // namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS
