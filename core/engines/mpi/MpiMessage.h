#pragma once

#include "core/common/Error.h"
#include "core/metrics/Events.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace sgdscope {

/// Whether this process left a send to MPI unfinished (a wait for it failed, or it was started and never completed):
/// its job is ending. From then on no message's buffer is freed (~MpiMessage): the receiver may still be reading it
/// out of this process's memory (Open MPI's shared-memory single copy is a read by the receiver), and a buffer freed
/// meanwhile gave it "Read -1, expected 340072, errno = 14" beside our message.
inline std::atomic<bool>& mpiSendAbandonedFlag()
{
    static std::atomic<bool> abandoned {false};
    return abandoned;
}
inline void markMpiSendAbandoned()
{
    mpiSendAbandonedFlag().store(true, std::memory_order_relaxed);
}

/// A message between ranks: numbers, spans and float arrays packed into bytes, read back in the same order.
/// Every rank runs the same binary on the same kind of machine (checked at start by the configuration
/// hash), so values travel as their bytes. Every buffer a send reads from is one (see markMpiSendAbandoned).
class MpiMessage
{
public:
    MpiMessage() = default;
    /// `size` zero bytes (a buffer to receive into, and to send on as it is).
    explicit MpiMessage(std::size_t size)
        : m_bytes(size)
    {
    }
    MpiMessage(const MpiMessage&) = default;
    MpiMessage(MpiMessage&&) noexcept = default;
    MpiMessage& operator=(const MpiMessage&) = default;
    MpiMessage& operator=(MpiMessage&&) noexcept = default;
    ~MpiMessage()
    {
        if (mpiSendAbandonedFlag().load(std::memory_order_relaxed))
            new std::vector<char>(std::move(m_bytes)); // kept to the process's end, on purpose
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
    const std::vector<char>& bytes() const { return m_bytes; }
    char* data() { return m_bytes.data(); }

private:
    void append(const void* data, std::size_t bytes)
    {
        const std::size_t at = m_bytes.size();
        m_bytes.resize(at + bytes);
        if (bytes > 0)
            std::memcpy(m_bytes.data() + at, data, bytes);
    }
    std::vector<char> m_bytes;
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
