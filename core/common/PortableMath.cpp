#include "core/common/PortableMath.h"

namespace sgdscope::portable {

double log(double x)
{
    const double inf = doubleOf(0x7ff0000000000000ull);
    if (x == 0.0)
        return -inf;
    if (!(x > 0.0))
        return doubleOf(0x7ff8000000000000ull);
    if (x == inf)
        return inf;
    const bool subnormal = x < 2.2250738585072014e-308;
    const double xs = subnormal ? x * 18014398509481984.0 : x; // 2^54
    const std::uint64_t bits = bitsOf(xs);
    double e = static_cast<double>(static_cast<std::int64_t>((bits >> 52) & 0x7ffu) - 1023 - (subnormal ? 54 : 0));
    double m = doubleOf((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull); // [1, 2)
    if (m > 1.41421356237309504880) {
        m = m * 0.5;
        e = e + 1.0;
    }
    const double f = (m - 1.0) / (m + 1.0);
    const double f2 = f * f;
    double p = 1.0 / 25.0;
    for (int n = 23; n >= 1; n -= 2)
        p = p * f2 + 1.0 / n;
    const double logm = 2.0 * f * p;
    constexpr double ln2High = 6.93147180369123816490e-01; // fdlibm's split of ln 2
    constexpr double ln2Low = 1.90821492927058770002e-10;
    return e * ln2High + (e * ln2Low + logm);
}

double exp(double x)
{
    constexpr double high = 709.78;
    constexpr double low = -708.39;
    constexpr double log2e = 1.44269504088896338700;
    constexpr double magic = 6755399441055744.0; // 1.5 * 2^52
    constexpr double ln2High = 6.93147180369123816490e-01;
    constexpr double ln2Low = 1.90821492927058770002e-10;
    const double clamped = x < low ? low : (x > high ? high : x);
    const double shifted = clamped * log2e + magic;
    const double k = shifted - magic;
    const auto n = static_cast<std::int64_t>(bitsOf(shifted) - bitsOf(magic));
    const double r = (clamped - k * ln2High) - k * ln2Low;
    double p = 1.0;
    for (int i = 14; i >= 1; --i)
        p = p * r / i + 1.0;
    // 2^n as two factors, so that n = 1024 (x near the top) does not overflow the exponent field
    const double half = doubleOf(static_cast<std::uint64_t>(n / 2 + 1023) << 52);
    const double rest = doubleOf(static_cast<std::uint64_t>(n - n / 2 + 1023) << 52);
    const double inf = doubleOf(0x7ff0000000000000ull);
    return x < low ? 0.0 : (x > high ? inf : p * half * rest);
}

} // namespace sgdscope::portable
