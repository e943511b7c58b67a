#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sgdscope {

/// The order in which samples are visited, independent of the worker count: epoch e is one seeded
/// permutation of the N samples (Fisher-Yates with our own generator, seeded from (seed, e)); global batch
/// j of an epoch is positions [jB, (j+1)B) of it. The last N mod B samples of an epoch are dropped, so
/// every batch is whole (as PyTorch's DataLoader with drop_last does).
class DataOrder
{
public:
    DataOrder(std::int64_t samples, std::uint64_t seed);

    std::int64_t samples() const { return m_samples; }
    static std::int64_t batchesPerEpoch(std::int64_t samples, int batch) { return samples / batch; }

    /// Fills `perm` with epoch e's permutation.
    void permutation(std::int64_t epoch, std::vector<std::uint32_t>& perm) const;
    /// Epoch e's permutation, shared: computed once for every cursor that reaches it (many workers walk the
    /// same epochs), from a small cache of the latest epochs. Thread-safe.
    std::shared_ptr<const std::vector<std::uint32_t>> epoch(std::int64_t epoch) const;

private:
    std::int64_t m_samples;
    std::uint64_t m_seed;
    mutable std::mutex m_cacheMutex;
    mutable std::map<std::int64_t, std::shared_ptr<std::vector<std::uint32_t>>> m_cache;
};

/// Walks the batches in order, keeping the current epoch's permutation. The batch size may change between
/// batches (the window's slider): a batch that would run past the end of the epoch starts the next one.
class BatchCursor
{
public:
    BatchCursor(const DataOrder& order);

    /// Sample indices of the next batch of `batch` samples (valid until the next call), and advances.
    const std::uint32_t* next(int batch);
    std::int64_t epoch() const { return m_epoch; }

private:
    const DataOrder* m_order;
    std::shared_ptr<const std::vector<std::uint32_t>> m_perm;
    std::int64_t m_epoch = -1;
    std::int64_t m_offset = 0;
};

} // namespace sgdscope
