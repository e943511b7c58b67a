#include "core/metrics/StalenessStats.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

void StalenessStats::add(std::int64_t staleness, int worker)
{
    const std::int64_t bucket = std::clamp<std::int64_t>(staleness, 0, maxTracked);
    // Both counters' room first: running out of memory changes nothing.
    if (static_cast<std::size_t>(bucket) >= m_counts.size())
        m_counts.resize(static_cast<std::size_t>(bucket) + 1, 0);
    if (worker >= 0 && static_cast<std::size_t>(worker) >= m_workers.size())
        m_workers.resize(static_cast<std::size_t>(worker) + 1);
    ++m_counts[static_cast<std::size_t>(bucket)];
    ++m_count;
    m_sum += staleness;
    m_max = std::max(m_max, staleness);
    if (worker >= 0) {
        auto& w = m_workers[static_cast<std::size_t>(worker)];
        ++w.count;
        w.sum += staleness;
        w.max = std::max(w.max, staleness);
    }
}

std::int64_t StalenessStats::percentile(double q) const
{
    if (m_count == 0)
        return 0;
    const auto needed = static_cast<std::int64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(m_count)));
    std::int64_t seen = 0;
    for (std::size_t v = 0; v < m_counts.size(); ++v) {
        seen += m_counts[v];
        if (seen >= std::max<std::int64_t>(needed, 1))
            return static_cast<std::int64_t>(v);
    }
    return m_max;
}

} // namespace sgdscope
