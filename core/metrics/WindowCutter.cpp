#include "core/metrics/WindowCutter.h"

#include <algorithm>
#include <limits>

namespace sgdscope {

void WindowCutter::setWorkers(int workers)
{
    m_pending.resize(static_cast<std::size_t>(std::max(0, workers)));
    m_known.resize(static_cast<std::size_t>(std::max(0, workers)), -std::numeric_limits<double>::infinity());
}

void WindowCutter::add(const Span& span)
{
    if (span.worker < 0 || !(span.end > span.start))
        return;
    if (static_cast<std::size_t>(span.worker) >= m_pending.size())
        setWorkers(span.worker + 1);
    m_pending[static_cast<std::size_t>(span.worker)].push_back(span);
}

void WindowCutter::knownUntil(int worker, double seconds)
{
    if (worker < 0)
        return;
    if (static_cast<std::size_t>(worker) >= m_known.size())
        setWorkers(worker + 1);
    auto& known = m_known[static_cast<std::size_t>(worker)];
    known = std::max(known, seconds);
}

void WindowCutter::makeRoom()
{
    if (m_closed.size() == m_closed.capacity())
        m_closed.reserve(std::max<std::size_t>(4, 2 * m_closed.capacity()));
}

void WindowCutter::makeRoomForSpans(int worker, std::size_t count)
{
    if (worker < 0)
        return;
    if (static_cast<std::size_t>(worker) >= m_pending.size())
        setWorkers(worker + 1);
    auto& mine = m_pending[static_cast<std::size_t>(worker)];
    mine.reserve(mine.size() + count);
}

void WindowCutter::close(Closed window)
{
    m_closed.push_back(std::move(window));
}

void WindowCutter::flush(const Report& report, bool everything)
{
    std::size_t handed = 0;
    struct EraseHanded // also when a report throws
    {
        std::vector<Closed>& closed;
        const std::size_t& handed;
        ~EraseHanded() { closed.erase(closed.begin(), closed.begin() + static_cast<std::ptrdiff_t>(handed)); }
    } erase {m_closed, handed};
    for (; handed < m_closed.size(); ++handed) {
        Closed& c = m_closed[handed];
        if (!c.isCut && !everything) {
            bool known = true;
            for (int w = 0; w < c.window.workers && static_cast<std::size_t>(w) < m_known.size(); ++w)
                known = known && m_known[static_cast<std::size_t>(w)] >= c.window.end;
            if (!known)
                break;
        }
        if (!c.isCut)
            cut(c);
        WorkWindow shifted = c.window;
        shifted.start += c.shift;
        shifted.end += c.shift;
        report(shifted, c.cut, c);
    }
}

void WindowCutter::cut(Closed& c)
{
    const double start = c.window.start;
    const double end = c.window.end;
    // Room for every span first: cutting them below changes m_pending and must not fail half-way.
    std::size_t pending = 0;
    for (const auto& mine : m_pending)
        pending += mine.size();
    c.cut.reserve(pending); // (empty: a window is cut once)
    for (auto& mine : m_pending) {
        std::size_t i = 0;
        for (; i < mine.size() && mine[i].start < end; ++i) {
            Span s = mine[i];
            s.start = std::max(s.start, start);
            s.end = std::min(s.end, end);
            if (s.end > s.start) {
                s.start += c.shift;
                s.end += c.shift;
                c.cut.push_back(s);
            }
            if (mine[i].end > end) {
                mine[i].start = end; // the rest belongs to a later window
                mine[i].samples = 0;
                break;
            }
        }
        mine.erase(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(i));
    }
    c.isCut = true;
}

} // namespace sgdscope
