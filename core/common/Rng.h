#pragma once

#include "core/common/PortableMath.h"

#include <cmath>
#include <cstdint>
#include <utility>

namespace sgdscope {

/// SplitMix64 (Steele, Lea, Flood 2014): turns any 64-bit seed into well-mixed seeds for other generators.
inline std::uint64_t splitMix64(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Mixes several values into one seed, so that e.g. (seed, epoch) or (seed, worker, update) each get an
/// independent stream.
inline std::uint64_t mixSeed(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0)
{
    std::uint64_t s = a;
    std::uint64_t r = splitMix64(s);
    s = r ^ (b * 0xD1B54A32D192ED03ULL);
    r = splitMix64(s);
    s = r ^ (c * 0x8CB92BA72F3D8DD7ULL);
    return splitMix64(s);
}

/// xoshiro256** (Blackman, Vigna 2018). Our own generator and our own distributions, so that every
/// seeded result (initial weights, data order, jitter) is the same with any standard library.
class Rng
{
public:
    explicit Rng(std::uint64_t seed)
    {
        for (auto& word : m_state)
            word = splitMix64(seed);
    }

    std::uint64_t next()
    {
        const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const std::uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform integer in [0, bound), bound > 0 (Lemire's multiply-shift with rejection: unbiased).
    std::uint64_t below(std::uint64_t bound)
    {
        std::uint64_t x = next();
        __uint128_t m = static_cast<__uint128_t>(x) * bound;
        auto low = static_cast<std::uint64_t>(m);
        if (low < bound) {
            const std::uint64_t threshold = (0 - bound) % bound;
            while (low < threshold) {
                x = next();
                m = static_cast<__uint128_t>(x) * bound;
                low = static_cast<std::uint64_t>(m);
            }
        }
        return static_cast<std::uint64_t>(m >> 64);
    }

    /// Standard normal by Marsaglia's polar method (one value per call; the pair's second half is kept). Its
    /// logarithm is our own (PortableMath.h) and the square root is exactly rounded, so the values are the same
    /// bits on every CPU (the C library's log, sin and cos are not).
    double normal()
    {
        if (m_hasSpare) {
            m_hasSpare = false;
            return m_spare;
        }
        double u = 0.0;
        double v = 0.0;
        double s = 0.0;
        do {
            u = 2.0 * uniform() - 1.0;
            v = 2.0 * uniform() - 1.0;
            s = u * u + v * v;
        } while (s >= 1.0 || s == 0.0);
        const double factor = std::sqrt(-2.0 * portable::log(s) / s);
        m_spare = v * factor;
        m_hasSpare = true;
        return u * factor;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    std::uint64_t m_state[4] {};
    double m_spare = 0.0;
    bool m_hasSpare = false;
};

} // namespace sgdscope
