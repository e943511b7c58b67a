#pragma once

#include <array>
#include <cstdint>

namespace sgdscope {

/// The distribution of sync's price: for every update, how long the worker that waited longest waited for
/// the slowest one. Counted exactly in logarithmic bins (ten per decade from 1 microsecond to 1000 seconds,
/// with everything below 1 us in bin 0 and above 1000 s in the last), with the exact sum and maximum, so
/// the mean and the histogram stay exact however long the run.
class WaitStats
{
public:
    static constexpr int binsPerDecade = 10;
    static constexpr double firstEdge = 1e-6; // upper edge of bin 0
    static constexpr int binCount = 1 + 9 * binsPerDecade + 1; // [0, 1 us), ten per decade to 1000 s, above

    void add(double seconds);

    std::int64_t count() const { return m_count; }
    double mean() const { return m_count ? m_sum / static_cast<double>(m_count) : 0.0; }
    double max() const { return m_max; }
    double sum() const { return m_sum; }
    /// Upper edge of the bin holding the q-quantile (q in [0, 1]); 0 if empty.
    double percentile(double q) const;
    const std::array<std::int64_t, binCount>& counts() const { return m_counts; }
    /// Lower and upper edge of bin b, in seconds (the last bin's upper edge is infinite).
    static double lowerEdge(int bin);
    static double upperEdge(int bin);
    static int binOf(double seconds);

private:
    std::array<std::int64_t, binCount> m_counts {};
    std::int64_t m_count = 0;
    double m_sum = 0.0;
    double m_max = 0.0;
};

} // namespace sgdscope
