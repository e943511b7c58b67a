#include "core/run/study/SuccessiveHalving.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sgdscope {

namespace {
constexpr double infinity = std::numeric_limits<double>::infinity();

double median(std::vector<double> v)
{
    if (v.empty())
        return infinity;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
} // namespace

SuccessiveHalving::SuccessiveHalving(int candidates, int eta)
    : m_candidates(std::max(1, candidates))
    , m_eta(eta)
{
    // Rungs until one candidate is left: ceil(n / eta^r) reaches 1 at r = ceil(log_eta(n)).
    m_rungs = 1;
    if (m_eta >= 2) {
        std::int64_t reach = 1;
        while (reach < m_candidates) {
            reach *= m_eta;
            ++m_rungs;
        }
    }
}

int SuccessiveHalving::survivors(int rung) const
{
    if (m_eta < 2)
        return m_candidates;
    std::int64_t divisor = 1;
    for (int r = 0; r < rung; ++r)
        divisor *= m_eta;
    return static_cast<int>((m_candidates + divisor - 1) / divisor);
}

std::int64_t SuccessiveHalving::budget(int rung, std::int64_t fullSteps) const
{
    if (m_eta < 2 || lastRung(rung))
        return fullSteps;
    double steps = static_cast<double>(fullSteps);
    for (int r = rung; r < m_rungs - 1; ++r)
        steps /= m_eta;
    return std::max<std::int64_t>(1, std::llround(steps));
}

CandidateScore scoreOf(const std::vector<CandidateOutcome>& seeds)
{
    std::vector<double> seconds;
    std::vector<double> losses;
    for (const CandidateOutcome& o : seeds) {
        seconds.push_back(o.secondsToTarget >= 0 ? o.secondsToTarget : infinity);
        losses.push_back(std::isfinite(o.finalLoss) ? o.finalLoss : infinity);
    }
    return {median(seconds), median(losses)};
}

std::vector<int> rankCandidates(const std::vector<CandidateScore>& scores, bool target)
{
    std::vector<int> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const CandidateScore& x = scores[static_cast<std::size_t>(a)];
        const CandidateScore& y = scores[static_cast<std::size_t>(b)];
        if (target && x.seconds != y.seconds)
            return x.seconds < y.seconds;
        return x.loss < y.loss;
    });
    return order;
}

} // namespace sgdscope
