#pragma once

// One float lane: the scalar reference path's vector, and the shape of every other path's vector type. Each
// operation is one IEEE operation on every lane; fma is fused (std::fma's contract: one rounding). The
// operators, select() and powerOfTwoFrom() let the element-wise functions of core/common/PortableMath.h run
// on vectors with the very operations they run on floats.

#include "core/common/PortableMath.h"

namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS {

struct VecScalar
{
    static constexpr int width = 1;
    float v;

    VecScalar() = default;
    VecScalar(float x)
        : v(x)
    {
    }

    static VecScalar zero() { return {0.0f}; }
    static VecScalar load(const float* p) { return {*p}; }
    static VecScalar broadcast(const float* p) { return {*p}; }
    /// The first n lanes from p (n may exceed the width), zeros beyond.
    static VecScalar loadPartial(const float* p, int n) { return {n > 0 ? *p : 0.0f}; }
    static VecScalar fma(VecScalar a, VecScalar b, VecScalar c) { return {__builtin_fmaf(a.v, b.v, c.v)}; }
    static VecScalar add(VecScalar a, VecScalar b) { return {a.v + b.v}; }
    void store(float* p) const { *p = v; }
    /// The first n lanes to p (n may exceed the width).
    void storePartial(float* p, int n) const
    {
        if (n > 0)
            *p = v;
    }
};

inline VecScalar operator+(VecScalar a, VecScalar b)
{
    return {a.v + b.v};
}
inline VecScalar operator-(VecScalar a, VecScalar b)
{
    return {a.v - b.v};
}
inline VecScalar operator*(VecScalar a, VecScalar b)
{
    return {a.v * b.v};
}
inline VecScalar operator/(VecScalar a, VecScalar b)
{
    return {a.v / b.v};
}
inline VecScalar operator-(VecScalar a)
{
    return {-a.v};
}
inline bool operator<(VecScalar a, VecScalar b)
{
    return a.v < b.v;
}
inline bool operator>(VecScalar a, VecScalar b)
{
    return a.v > b.v;
}
inline VecScalar select(bool condition, VecScalar a, VecScalar b)
{
    return condition ? a : b;
}
inline VecScalar powerOfTwoFrom(VecScalar shifted, float magic)
{
    return {portable::powerOfTwoFrom(shifted.v, magic)};
}

} // namespace sgdscope::kernels::SGDSCOPE_KERNEL_NS
