#pragma once

#include <atomic>

namespace sgdscope {

/// A process-wide request to stop: set from a signal handler (a lock-free atomic store); polled by the
/// loaders, which then throw SgdError "interrupted", and by the running trainer (Trainer::stopRequestedNow), which
/// ends its update in order and cuts a straggler's modelled sleep short (StragglerSleep).
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
