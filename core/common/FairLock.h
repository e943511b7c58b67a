#pragma once

#include <atomic>
#include <cstdint>

namespace sgdscope {

/// A first-come, first-served lock (a ticket lock): threads get it in the order they asked, as requests to a
/// parameter server are served. std::mutex is not fair: a thread that unlocks and at once locks again takes
/// it back from a sleeping waiter, so with tiny critical sections one async worker would do every push while
/// the other waits. Waiters sleep (C++20 atomic wait), they do not spin. Meets Lockable (std::unique_lock).
class FairLock
{
public:
    void lock()
    {
        const std::uint32_t ticket = m_next.fetch_add(1, std::memory_order_relaxed);
        for (std::uint32_t serving = m_serving.load(std::memory_order_acquire); serving != ticket;
             serving = m_serving.load(std::memory_order_acquire))
            m_serving.wait(serving, std::memory_order_acquire);
    }
    bool try_lock()
    {
        std::uint32_t serving = m_serving.load(std::memory_order_acquire);
        return m_next.compare_exchange_strong(
            serving, serving + 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock()
    {
        m_serving.fetch_add(1, std::memory_order_release);
        m_serving.notify_all();
    }

private:
    std::atomic<std::uint32_t> m_next {0};
    std::atomic<std::uint32_t> m_serving {0};
};

} // namespace sgdscope
