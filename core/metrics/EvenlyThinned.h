#pragma once

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
    }

    /// Offers an item; `force` keeps it whatever the stride (e.g. a divergence point). Returns whether kept.
    /// When memory runs out (std::bad_alloc from growing the store), nothing changed: an item offered again (the update
    /// Trainer::reportUntilFailure hands over) is kept once.
    bool push(const T& item, bool force = false)
    {
        const bool keep = force || m_offered % m_stride == 0;
        if (keep)
            m_items.push_back(item); // (std::vector: on a throw, as before the call)
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
