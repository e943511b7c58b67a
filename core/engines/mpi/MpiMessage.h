#pragma once

#include "core/common/Error.h"
#include "core/metrics/Events.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace sgdscope {

/// Whether this process left a send to MPI unfinished (a wait for it failed, or it was started and never completed):
/// its job is ending. From then on no MpiBytes buffer is freed: the receiver may still be reading
/// it out of this process's memory (Open MPI's shared-memory single copy is a read by the receiver), and a buffer
/// freed meanwhile gave it "Read -1, expected 340072, errno = 14" beside our message.
inline std::atomic<bool>& mpiSendAbandonedFlag()
{
    static std::atomic<bool> abandoned {false};
    return abandoned;
}
inline void markMpiSendAbandoned()
{
    mpiSendAbandonedFlag().store(true, std::memory_order_relaxed);
}

/// Bytes a send to another rank reads from: a growable buffer like std::vector<char>, except that once a send was
/// abandoned it frees nothing more (its memory is kept to the process's end, on purpose). Keeping it allocates
/// nothing, so it holds out of memory too, and it covers every way the buffer can go: destruction, assignment, growth.
/// (A std::vector with such an allocator trips GCC 12's -Wstringop-overflow on every append.)
class MpiBytes
{
public:
    MpiBytes() = default;
    /// `size` zero bytes.
    explicit MpiBytes(std::size_t size) { resize(size); }
    MpiBytes(const char* first, const char* last) { append(first, static_cast<std::size_t>(last - first)); }
    MpiBytes(const MpiBytes& other)
        : MpiBytes(other.data(), other.data() + other.size())
    {
    }
    MpiBytes(MpiBytes&& other) noexcept { swap(other); }
    MpiBytes& operator=(MpiBytes other) noexcept
    {
        swap(other);
        return *this;
    }
    ~MpiBytes() { release(m_data); }

    const char* data() const { return m_data; }
    char* data() { return m_data; }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    const char* begin() const { return m_data; }
    const char* end() const { return m_data + m_size; }
    void clear() { m_size = 0; }
    void reserve(std::size_t bytes)
    {
        if (bytes <= m_capacity)
            return;
        char* grown = static_cast<char*>(::operator new(bytes));
        if (m_size > 0)
            std::memcpy(grown, m_data, m_size);
        release(m_data);
        m_data = grown;
        m_capacity = bytes;
    }
    /// Zero bytes up to `size` (or fewer bytes).
    void resize(std::size_t size)
    {
        if (size > m_size) {
            grow(size);
            std::memset(m_data + m_size, 0, size - m_size);
        }
        m_size = size;
    }
    void append(const void* bytes, std::size_t count)
    {
        if (count == 0)
            return;
        grow(m_size + count);
        std::memcpy(m_data + m_size, bytes, count);
        m_size += count;
    }
    void swap(MpiBytes& other) noexcept
    {
        std::swap(m_data, other.m_data);
        std::swap(m_size, other.m_size);
        std::swap(m_capacity, other.m_capacity);
    }

private:
    void grow(std::size_t needed)
    {
        if (needed > m_capacity)
            reserve(std::max(needed, 2 * m_capacity));
    }
    static void release(char* data) noexcept
    {
        if (data != nullptr && !mpiSendAbandonedFlag().load(std::memory_order_relaxed))
            ::operator delete(data);
    }
    char* m_data = nullptr;
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
};

/// A message between ranks: numbers, spans and float arrays packed into bytes, read back in the same order.
/// Every rank runs the same binary on the same kind of machine (checked at start by the configuration
/// hash), so values travel as their bytes. Its bytes are MpiBytes: a send may read from them.
class MpiMessage
{
public:
    MpiMessage() = default;
    /// `size` zero bytes (a buffer to receive into, and to send on as it is).
    explicit MpiMessage(std::size_t size)
        : m_bytes(size)
    {
    }

    void clear() { m_bytes.clear(); }
    template<typename T>
    void put(const T& value)
    {
        append(&value, sizeof(T));
    }
    void putFloats(const float* data, std::size_t count) { append(data, count * sizeof(float)); }
    void putText(const std::string& text)
    {
        put(static_cast<std::uint64_t>(text.size()));
        append(text.data(), text.size());
    }
    void putSpans(const std::vector<Span>& spans)
    {
        put(static_cast<std::uint64_t>(spans.size()));
        for (const Span& s : spans)
            put(s);
    }
    void reserve(std::size_t bytes) { m_bytes.reserve(bytes); }
    const MpiBytes& bytes() const { return m_bytes; }
    char* data() { return m_bytes.data(); }

private:
    void append(const void* data, std::size_t bytes) { m_bytes.append(data, bytes); }
    MpiBytes m_bytes;
};

class MpiMessageReader
{
public:
    MpiMessageReader(const char* data, std::size_t size)
        : m_data(data)
        , m_size(size)
    {
    }
    template<typename T>
    T get()
    {
        T value;
        need(sizeof(T));
        std::memcpy(&value, m_data + m_at, sizeof(T));
        m_at += sizeof(T);
        return value;
    }
    void getFloats(float* out, std::size_t count)
    {
        need(count * sizeof(float));
        std::memcpy(out, m_data + m_at, count * sizeof(float));
        m_at += count * sizeof(float);
    }
    std::string getText()
    {
        const auto n = get<std::uint64_t>();
        need(n);
        std::string text(m_data + m_at, static_cast<std::size_t>(n));
        m_at += static_cast<std::size_t>(n);
        return text;
    }
    std::vector<Span> getSpans()
    {
        const auto n = get<std::uint64_t>();
        std::vector<Span> spans;
        for (std::uint64_t i = 0; i < n; ++i)
            spans.push_back(get<Span>());
        return spans;
    }

private:
    void need(std::size_t bytes) const
    {
        if (bytes > m_size - m_at)
            throw RunFailure("a message between ranks is shorter than its contents (" + std::to_string(m_size)
                + " bytes): the ranks do not run the same build");
    }
    const char* m_data;
    std::size_t m_size;
    std::size_t m_at = 0;
};

} // namespace sgdscope
