#pragma once

// exp, log, tanh and the logistic function (float; exp and log in double too) from IEEE additions,
// multiplications, divisions, comparisons and bit operations only: no fused multiply-add, no library call, no
// table. Each of those operations is exactly rounded, so a value computes to the same bits in any vector lane
// and on any x86-64 CPU (the C library's are not: glibc picks FMA variants of exp, log, sin and cos per CPU).
// Accuracy: within a few ulp (tests/test_kernels.cpp checks against the C library).
//
// Internal linkage on purpose: the kernels' per-instruction-set translation units include this header, and
// must not hand the linker a copy built for a wider instruction set than the caller's.

#include <cstdint>

namespace sgdscope::portable {

static inline std::uint32_t bitsOf(float x)
{
    return __builtin_bit_cast(std::uint32_t, x);
}
static inline float floatOf(std::uint32_t u)
{
    return __builtin_bit_cast(float, u);
}
static inline std::uint64_t bitsOf(double x)
{
    return __builtin_bit_cast(std::uint64_t, x);
}
static inline double doubleOf(std::uint64_t u)
{
    return __builtin_bit_cast(double, u);
}

// The float functions are templates over the value type F, so that the kernels run the very same operations
// on vectors (core/nn/kernels/Vec*.h give a vector type these operators and the three helpers below). Unnamed
// namespace: internal linkage for the templates too.
namespace {

inline float select(bool condition, float a, float b)
{
    return condition ? a : b;
}
/// 2^n for the integer n held in the low bits of `shifted` = magic + n (see expOf).
inline float powerOfTwoFrom(float shifted, float magic)
{
    const auto n = static_cast<std::int32_t>(bitsOf(shifted) - bitsOf(magic));
    return floatOf(static_cast<std::uint32_t>(n + 127) << 23);
}

/// e^x. 0 below ln(FLT_MIN) (no subnormal results), +inf above 88.376 (2^127 * 1.5), NaN for NaN.
template<typename F>
[[gnu::always_inline]] inline F expOf(F x)
{
    const F high(88.3762626647949f);
    const F low(-87.3365447505531f);
    const F magic(12582912.0f); // 1.5 * 2^23: adding it rounds to an integer in the low mantissa bits
    const F ln2High(0.693359375f); // exactly representable, few bits: k * ln2High is exact
    const F ln2Low(-2.12194440e-4f);
    const F clamped = select(x < low, low, select(x > high, high, x));
    const F shifted = clamped * F(1.44269504088896341f) + magic;
    const F k = shifted - magic;
    F r = clamped - k * ln2High;
    r = r - k * ln2Low;
    // Cephes' expf polynomial on |r| <= ln2 / 2
    F p(1.9875691500e-4f);
    p = p * r + F(1.3981999507e-3f);
    p = p * r + F(8.3334519073e-3f);
    p = p * r + F(4.1665795894e-2f);
    p = p * r + F(1.6666665459e-1f);
    p = p * r + F(5.0000001201e-1f);
    p = p * (r * r) + r + F(1.0f);
    const F scaled = p * powerOfTwoFrom(shifted, 12582912.0f);
    // NaN: both comparisons false, and scaled is NaN
    return select(x < low, F(0.0f), select(x > high, F(floatOf(0x7f800000u)), scaled));
}

/// tanh(x) as a rational function x P(x^2) / Q(x^2) on x clamped to [-7.905, 7.905] (where tanh is 1 to float
/// precision), with the minimax coefficients Eigen uses (generic_fast_tanh_float): a dozen operations and one
/// division, within a few ulp. NaN stays NaN (the clamp's comparisons are false).
template<typename F>
[[gnu::always_inline]] inline F tanhOf(F x)
{
    const F bound(7.90531110763549805f);
    const F c = select(x > bound, bound, select(x < -bound, -bound, x));
    const F x2 = c * c;
    F p(-2.76076847742355e-16f);
    p = p * x2 + F(2.00018790482477e-13f);
    p = p * x2 + F(-8.60467152213735e-11f);
    p = p * x2 + F(5.12229709037114e-08f);
    p = p * x2 + F(1.48572235717979e-05f);
    p = p * x2 + F(6.37261928875436e-04f);
    p = p * x2 + F(4.89352455891786e-03f);
    p = p * c;
    F q(1.19825839466702e-06f);
    q = q * x2 + F(1.18534705686654e-04f);
    q = q * x2 + F(2.26843463243900e-03f);
    q = q * x2 + F(4.89352518554385e-03f);
    return p / q;
}

/// 1 / (1 + e^-x).
template<typename F>
[[gnu::always_inline]] inline F logisticOf(F x)
{
    return F(1.0f) / (F(1.0f) + expOf(-x));
}

} // namespace

static inline float exp(float x)
{
    return expOf(x);
}
static inline float tanh(float x)
{
    return tanhOf(x);
}
static inline float logistic(float x)
{
    return logisticOf(x);
}

/// ln(x) for x > 0; -inf at 0, NaN below 0 or for NaN, +inf at +inf.
static inline float log(float x)
{
    constexpr float sqrtHalf = 0.707106781186547524f;
    const std::uint32_t bits = bitsOf(x);
    // x = m * 2^e with m in [0.5, 1); subnormal x are scaled up first
    const bool subnormal = x < 1.17549435e-38f;
    const float xs = subnormal ? x * 16777216.0f : x;
    const std::uint32_t sb = subnormal ? bitsOf(xs) : bits;
    float e = static_cast<float>(static_cast<std::int32_t>((sb >> 23) & 0xffu) - 126 - (subnormal ? 24 : 0));
    float m = floatOf((sb & 0x007fffffu) | 0x3f000000u);
    if (m < sqrtHalf) {
        e = e - 1.0f;
        m = m + m - 1.0f;
    } else {
        m = m - 1.0f;
    }
    const float z = m * m;
    // Cephes' logf polynomial
    float y = 7.0376836292e-2f;
    y = y * m - 1.1514610310e-1f;
    y = y * m + 1.1676998740e-1f;
    y = y * m - 1.2420140846e-1f;
    y = y * m + 1.4249322787e-1f;
    y = y * m - 1.6668057665e-1f;
    y = y * m + 2.0000714765e-1f;
    y = y * m - 2.4999993993e-1f;
    y = y * m + 3.3333331174e-1f;
    y = y * m * z;
    y = y + e * -2.12194440e-4f;
    y = y - 0.5f * z;
    float result = m + y;
    result = result + e * 0.693359375f;
    const float inf = floatOf(0x7f800000u);
    if (x == 0.0f)
        return -inf;
    if (!(x > 0.0f))
        return floatOf(0x7fc00000u); // negative or NaN
    return x == inf ? inf : result;
}

/// ln(x) in double for x > 0 (normal); -inf at 0, NaN below 0 or for NaN, +inf at +inf. 2 atanh((m-1)/(m+1))
/// by its series on the mantissa m in [sqrt(1/2), sqrt(2)). (Out of line: core's baseline build has it.)
double log(double x);
/// e^x in double: 0 below -708.39, +inf above 709.78, NaN for NaN. 2^k e^r with |r| <= ln2 / 2 and e^r by its
/// Taylor series to r^14.
double exp(double x);

} // namespace sgdscope::portable
