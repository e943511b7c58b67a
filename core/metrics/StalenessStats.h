#pragma once

#include <cstdint>
#include <vector>

namespace sgdscope {

/// Exact distribution of gradient staleness (updates applied between a gradient's read and its apply):
/// one counter per staleness value, overall and per worker, so mean, percentiles and the histogram are
/// exact however long the run. Memory grows with the largest staleness seen, not with the run's length;
/// values above maxTracked (2^20) are counted in the last counter.
class StalenessStats
{
public:
    static constexpr std::int64_t maxTracked = 1 << 20;

    void add(std::int64_t staleness, int worker);

    std::int64_t count() const { return m_count; }
    double mean() const { return m_count ? static_cast<double>(m_sum) / static_cast<double>(m_count) : 0.0; }
    std::int64_t max() const { return m_max; }
    std::int64_t sum() const { return m_sum; }
    /// Smallest value v with at least q of the samples <= v (q in [0, 1]); 0 if empty.
    std::int64_t percentile(double q) const;
    const std::vector<std::int64_t>& counts() const { return m_counts; }

    struct PerWorker
    {
        std::int64_t count = 0;
        std::int64_t sum = 0;
        std::int64_t max = 0;
        double mean() const { return count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0; }
    };
    const std::vector<PerWorker>& perWorker() const { return m_workers; }

private:
    std::vector<std::int64_t> m_counts;
    std::vector<PerWorker> m_workers;
    std::int64_t m_count = 0;
    std::int64_t m_sum = 0;
    std::int64_t m_max = 0;
};

} // namespace sgdscope
