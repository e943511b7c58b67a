#include "core/metrics/WaitStats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

int WaitStats::binOf(double seconds)
{
    if (!(seconds >= firstEdge))
        return 0;
    const double decades = std::log10(seconds / firstEdge);
    const auto bin = 1 + static_cast<int>(std::floor(decades * binsPerDecade + 1e-9));
    return std::min(bin, binCount - 1);
}

double WaitStats::lowerEdge(int bin)
{
    return bin <= 0 ? 0.0 : firstEdge * std::pow(10.0, static_cast<double>(bin - 1) / binsPerDecade);
}

double WaitStats::upperEdge(int bin)
{
    return bin >= binCount - 1 ? std::numeric_limits<double>::infinity()
                               : firstEdge * std::pow(10.0, static_cast<double>(bin) / binsPerDecade);
}

void WaitStats::add(double seconds)
{
    seconds = std::max(0.0, seconds);
    ++m_counts[static_cast<std::size_t>(binOf(seconds))];
    ++m_count;
    m_sum += seconds;
    m_max = std::max(m_max, seconds);
}

double WaitStats::percentile(double q) const
{
    if (m_count == 0)
        return 0.0;
    const auto needed = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(m_count))));
    std::int64_t seen = 0;
    for (int b = 0; b < binCount; ++b) {
        seen += m_counts[static_cast<std::size_t>(b)];
        if (seen >= needed)
            return std::min(upperEdge(b), m_max);
    }
    return m_max;
}

} // namespace sgdscope
