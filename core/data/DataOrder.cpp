#include "core/data/DataOrder.h"

#include "core/common/Rng.h"

#include <atomic>
#include <numeric>
#include <utility>

namespace sgdscope {

DataOrder::DataOrder(std::int64_t samples, std::uint64_t seed)
    : m_samples(samples)
    , m_seed(seed)
{
}

void DataOrder::permutation(std::int64_t epoch, std::vector<std::uint32_t>& perm) const
{
    perm.resize(static_cast<std::size_t>(m_samples));
    std::iota(perm.begin(), perm.end(), 0U);
    Rng rng(mixSeed(m_seed, 0x5EED0DDA7A0ULL, static_cast<std::uint64_t>(epoch)));
    for (std::size_t i = perm.size(); i > 1; --i) {
        const auto j = static_cast<std::size_t>(rng.below(i));
        std::swap(perm[i - 1], perm[j]);
    }
}

std::shared_ptr<const std::vector<std::uint32_t>> DataOrder::epoch(std::int64_t e) const
{
    constexpr std::size_t keptEpochs = 8;
    std::lock_guard lock(m_cacheMutex);
    if (const auto it = m_cache.find(e); it != m_cache.end())
        return it->second;
    if (m_cache.size() < keptEpochs) {
        auto perm = std::make_shared<std::vector<std::uint32_t>>();
        permutation(e, *perm);
        m_cache.emplace(e, perm);
        return perm;
    }
    // The oldest epoch makes room; if no cursor holds it any more, its node and its vector are reused (a full
    // batch is an epoch an update: no allocation per update). Cursors still on it keep their copy.
    auto node = m_cache.extract(m_cache.begin());
    if (node.mapped().use_count() == 1)
        std::atomic_thread_fence(std::memory_order_acquire); // after the last other holder let go of it
    else
        node.mapped() = std::make_shared<std::vector<std::uint32_t>>();
    node.key() = e;
    permutation(e, *node.mapped());
    std::shared_ptr<const std::vector<std::uint32_t>> perm = node.mapped();
    m_cache.insert(std::move(node));
    return perm;
}

BatchCursor::BatchCursor(const DataOrder& order)
    : m_order(&order)
{
}

const std::uint32_t* BatchCursor::next(int batch)
{
    if (m_epoch < 0 || m_offset + batch > m_order->samples()) {
        ++m_epoch;
        m_offset = 0;
        m_perm = m_order->epoch(m_epoch);
    }
    const std::uint32_t* indices = m_perm->data() + m_offset;
    m_offset += batch;
    return indices;
}

} // namespace sgdscope
