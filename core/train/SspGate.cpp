#include "core/train/SspGate.h"

#include <cassert>

namespace sgdscope {

void SspGate::reset(std::int64_t bound, int workers)
{
    m_bound = bound;
    m_clock.assign(static_cast<std::size_t>(workers), -1);
    m_clocks.clear();
    m_held.clear();
}

void SspGate::join(int worker, std::int64_t clock)
{
    assert(!takingPart(worker) && clock >= 0);
    m_clock[static_cast<std::size_t>(worker)] = clock;
    ++m_clocks[clock];
}

void SspGate::leave(int worker)
{
    std::int64_t& clock = m_clock[static_cast<std::size_t>(worker)];
    if (clock < 0)
        return;
    auto at = m_clocks.find(clock);
    if (--at->second == 0)
        m_clocks.erase(at);
    clock = -1;
}

void SspGate::advance(int worker)
{
    const std::int64_t clock = m_clock[static_cast<std::size_t>(worker)];
    if (clock < 0)
        return;
    // The next clock's entry first: if it cannot be made (out of memory), nothing has changed.
    auto next = m_clocks.try_emplace(clock + 1, 0).first;
    leave(worker);
    m_clock[static_cast<std::size_t>(worker)] = clock + 1;
    ++next->second;
}

std::int64_t SspGate::slowest() const
{
    return m_clocks.empty() ? -1 : m_clocks.begin()->first;
}

bool SspGate::mayStart(int worker) const
{
    const std::int64_t clock = m_clock[static_cast<std::size_t>(worker)];
    return clock < 0 || clock - slowest() <= m_bound;
}

std::int64_t SspGate::lead(int worker) const
{
    const std::int64_t clock = m_clock[static_cast<std::size_t>(worker)];
    return clock < 0 || m_clocks.empty() ? -1 : clock - slowest();
}

int SspGate::slowestWorker() const
{
    int slowest = -1;
    for (std::size_t w = 0; w < m_clock.size(); ++w) {
        if (m_clock[w] >= 0 && (slowest < 0 || m_clock[w] < m_clock[static_cast<std::size_t>(slowest)]))
            slowest = static_cast<int>(w);
    }
    return slowest;
}

void SspGate::hold(int worker)
{
    m_held.emplace(m_clock[static_cast<std::size_t>(worker)], worker);
}

int SspGate::nextReleased()
{
    if (m_held.empty() || (!m_clocks.empty() && m_held.begin()->first - slowest() > m_bound))
        return -1;
    const int worker = m_held.begin()->second;
    m_held.erase(m_held.begin());
    return worker;
}

} // namespace sgdscope
