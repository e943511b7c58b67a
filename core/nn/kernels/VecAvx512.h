#pragma once

// Sixteen float lanes in a 512-bit register (AVX-512F). The same operations as VecScalar, lane by lane.

#include "core/common/PortableMath.h"

#include <immintrin.h>

namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS {

struct VecAvx512
{
    static constexpr int width = 16;
    __m512 v;

    VecAvx512() = default;
    VecAvx512(__m512 x)
        : v(x)
    {
    }
    explicit VecAvx512(float x)
        : v(_mm512_set1_ps(x))
    {
    }

    static __mmask16 maskOf(int n) { return n >= width ? __mmask16(0xffff) : __mmask16((1u << (n < 0 ? 0 : n)) - 1u); }
    static VecAvx512 zero() { return {_mm512_setzero_ps()}; }
    static VecAvx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
    static VecAvx512 broadcast(const float* p) { return {_mm512_set1_ps(*p)}; }
    static VecAvx512 loadPartial(const float* p, int n) { return {_mm512_maskz_loadu_ps(maskOf(n), p)}; }
    static VecAvx512 fma(VecAvx512 a, VecAvx512 b, VecAvx512 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
    static VecAvx512 add(VecAvx512 a, VecAvx512 b) { return {_mm512_add_ps(a.v, b.v)}; }
    void store(float* p) const { _mm512_storeu_ps(p, v); }
    void storePartial(float* p, int n) const { _mm512_mask_storeu_ps(p, maskOf(n), v); }
};

struct MaskAvx512
{
    __mmask16 m;
};

inline VecAvx512 operator+(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_add_ps(a.v, b.v)};
}
inline VecAvx512 operator-(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_sub_ps(a.v, b.v)};
}
inline VecAvx512 operator*(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_mul_ps(a.v, b.v)};
}
inline VecAvx512 operator/(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_div_ps(a.v, b.v)};
}
inline VecAvx512 operator-(VecAvx512 a)
{
    // the sign flipped, as -x on a float (AVX-512F has no float xor: through the integer unit)
    return {_mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(static_cast<int>(0x80000000u))))};
}
inline MaskAvx512 operator<(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; // false for NaN, as on floats
}
inline MaskAvx512 operator>(VecAvx512 a, VecAvx512 b)
{
    return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)};
}
inline VecAvx512 select(MaskAvx512 condition, VecAvx512 a, VecAvx512 b)
{
    return {_mm512_mask_blend_ps(condition.m, b.v, a.v)};
}
inline VecAvx512 powerOfTwoFrom(VecAvx512 shifted, float magic)
{
    const __m512i n = _mm512_sub_epi32(
        _mm512_castps_si512(shifted.v), _mm512_set1_epi32(static_cast<int>(portable::bitsOf(magic))));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23))};
}

} // namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS
