#include "core/train/StragglerModel.h"

#include "core/common/Rng.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

namespace {
/// Which of `workers` are in the slow fraction: the first round(F P) of a seeded permutation of the P workers.
std::vector<char> slowSetOf(const TrainerSettings& s)
{
    std::vector<int> order(static_cast<std::size_t>(s.workers));
    for (int w = 0; w < s.workers; ++w)
        order[static_cast<std::size_t>(w)] = w;
    Rng rng(mixSeed(s.seed ^ 0x510F7ULL, static_cast<std::uint64_t>(s.workers)));
    for (int i = s.workers - 1; i > 0; --i)
        std::swap(order[static_cast<std::size_t>(i)],
            order[static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i) + 1))]);
    std::vector<char> set(static_cast<std::size_t>(s.workers), 0);
    const auto slow = static_cast<int>(std::lround(s.slowFraction * s.workers));
    for (int i = 0; i < slow; ++i)
        set[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = 1;
    return set;
}
} // namespace

void StragglerModel::prepare()
{
    const TrainerSettings& s = *m_settings;
    if (s.slowFraction > 0 && (m_slowSetWorkers != s.workers || m_slowSetFraction != s.slowFraction)) {
        m_slowSet = slowSetOf(s);
        m_slowSetWorkers = s.workers;
        m_slowSetFraction = s.slowFraction;
    }
}

bool StragglerModel::inSlowFraction(int worker) const
{
    const TrainerSettings& s = *m_settings;
    if (s.slowFraction <= 0 || worker < 0 || worker >= s.workers)
        return false;
    if (m_slowSetWorkers == s.workers && m_slowSetFraction == s.slowFraction)
        return m_slowSet[static_cast<std::size_t>(worker)] != 0;
    return slowSetOf(s)[static_cast<std::size_t>(worker)] != 0; // not prepared for these settings
}

double StragglerModel::slowdown(int worker, std::int64_t step) const
{
    const TrainerSettings& s = *m_settings;
    double factor = 1.0;
    for (const auto& slow : s.stragglers) {
        if (slow.worker == worker)
            factor *= slow.factor;
    }
    if (inSlowFraction(worker))
        factor *= s.slowFractionFactor;
    if (s.rotatingFactor > 1.0) {
        Rng rng(mixSeed(s.seed ^ 0x2074A7ULL, static_cast<std::uint64_t>(step)));
        if (static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, s.workers)))) == worker)
            factor *= s.rotatingFactor;
    }
    if (s.jitter > 0) {
        Rng rng(mixSeed(s.seed ^ 0x7177E5ULL, static_cast<std::uint64_t>(worker), static_cast<std::uint64_t>(step)));
        factor *= portable::exp(s.jitter * rng.normal()); // portable: the simulated clocks are the same everywhere
    }
    if (s.heavyTail > 0) {
        Rng rng(mixSeed(s.seed ^ 0x7A11ULL, static_cast<std::uint64_t>(worker), static_cast<std::uint64_t>(step)));
        const double u = 1.0 - rng.uniform(); // in (0, 1]
        // Pareto, cut at the largest slow-down an option may ask for (its tail is unbounded: a draw near 0
        // would otherwise sleep for years).
        factor *= std::min(portable::exp(-portable::log(u) / s.heavyTail), maxStragglerFactor);
    }
    return factor > 1.0 ? factor : 1.0;
}

} // namespace sgdscope
