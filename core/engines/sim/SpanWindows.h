#pragma once

#include "core/metrics/Events.h"

#include <cstddef>
#include <vector>

namespace sgdscope {

/// Cuts the workers' spans (each worker's in time order) at a window's edges: appends to `out` every piece of a
/// span inside [from, to), moved by `base` (virtual clock to the mode's clock). `next` (one per worker, 0 at the
/// start) keeps where each worker's spans go on; a span that crosses `to` keeps its rest, without its samples,
/// for the next window.
inline void takeSpansOfWindow(std::vector<std::vector<Span>>& perWorker, std::vector<std::size_t>& next, double from,
    double to, double base, std::vector<Span>& out)
{
    for (std::size_t w = 0; w < perWorker.size(); ++w) {
        std::vector<Span>& mine = perWorker[w];
        std::size_t& i = next[w];
        while (i < mine.size() && mine[i].start < to) {
            Span s = mine[i];
            s.start = (s.start > from ? s.start : from) + base;
            s.end = (s.end < to ? s.end : to) + base;
            if (s.end > s.start)
                out.push_back(s);
            if (mine[i].end <= to) {
                ++i;
            } else {
                mine[i].start = to; // the rest belongs to the next window
                mine[i].samples = 0;
                break;
            }
        }
    }
}

/// The end of a slice, which every worker reaches before the next slice starts: a worker whose spans end earlier
/// waited for the others until `end` (WaitBarrier, nobody named); one without spans waited from `from`.
inline void waitForTheEnd(std::vector<std::vector<Span>>& perWorker, double from, double end)
{
    for (std::size_t w = 0; w < perWorker.size(); ++w) {
        std::vector<Span>& mine = perWorker[w];
        const double last = mine.empty() ? from : mine.back().end;
        if (end > last)
            mine.push_back({static_cast<int>(w), SpanKind::WaitBarrier, last, end, 0, -1});
    }
}

} // namespace sgdscope
