#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sgdscope {

/// A sequence kept in bounded memory by even thinning: at most `capacity` items; when full, every other
/// item is dropped and from then on only every second item offered is kept (then every fourth, ...), so the
/// kept items stay evenly spread over everything offered, however long the run. Shared by core's
/// RunRecorder and the window's series store.
template<typename T>
class EvenlyThinned
{
public:
    explicit EvenlyThinned(std::size_t capacity)
        : m_capacity(capacity < 2 ? 2 : capacity)
    {
        m_items.reserve(std::min<std::size_t>(m_capacity, 64));
    }

    /// Offers an item; `force` keeps it whatever the stride (e.g. a divergence point). Returns whether kept.
    /// The room for the next item is made after this one is kept (the store never grows while keeping one), so
    /// that when memory runs out (std::bad_alloc), every item offered before the throw is kept: a run that fails
    /// there keeps a point for every update it counted.
    bool push(const T& item, bool force = false)
    {
        const bool keep = force || m_offered % m_stride == 0;
        if (keep) {
            if (m_items.size() == m_items.capacity())
                m_items.reserve(m_items.size() + 1); // only where making room below failed before
            m_items.push_back(item);
        }
        ++m_offered;
        if (!keep)
            return false;
        if (m_items.size() >= m_capacity) {
            std::size_t kept = 0;
            for (std::size_t i = 0; i < m_items.size(); i += 2)
                m_items[kept++] = m_items[i];
            m_items.resize(kept);
            m_stride *= 2;
        }
        if (m_items.size() == m_items.capacity())
            m_items.reserve(std::min(m_capacity, 2 * m_items.size()));
        return true;
    }

    const std::vector<T>& items() const { return m_items; }
    std::vector<T>& items() { return m_items; }
    std::int64_t stride() const { return m_stride; }
    std::int64_t offered() const { return m_offered; }
    std::size_t capacity() const { return m_capacity; }

private:
    std::size_t m_capacity;
    std::vector<T> m_items;
    std::int64_t m_stride = 1;
    std::int64_t m_offered = 0;
};

} // namespace sgdscope
