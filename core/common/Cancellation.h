#pragma once

#include <atomic>

namespace sgdscope {

/// A process-wide request to give up long work that has no observer to ask (loading a data set). Set from
/// a signal handler (a lock-free atomic store), polled by the loaders, which then throw SgdError
/// "interrupted". Trainers stop through their observer and requestStop() instead.
inline std::atomic<bool>& cancellationFlag()
{
    static std::atomic<bool> flag {false};
    return flag;
}
inline void requestCancellation()
{
    cancellationFlag().store(true, std::memory_order_relaxed);
}
inline bool cancellationRequested()
{
    return cancellationFlag().load(std::memory_order_relaxed);
}
void throwIfCancelled(const char* during);

} // namespace sgdscope
