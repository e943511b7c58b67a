#pragma once

#include <atomic>
#include <functional>

namespace sgdscope {

/// Sleeps `seconds` on this thread for a modelled straggler delay, precisely: the last 80 microseconds (and
/// all of a shorter delay) are waited out on the clock, since a sleep cannot end more precisely than the
/// scheduler wakes us. Sleeps in pieces of at most 20 ms and returns early once `stop` is set or a
/// cancellation is requested (a signal), so a large straggler factor does not hold up a stop.
/// Returns false if it was cut short.
bool sleepForStraggler(double seconds, const std::atomic<bool>& stop);
/// The same, also cut short once `drop` is set (backup: the update no longer waits for this worker).
bool sleepForStraggler(double seconds, const std::atomic<bool>& stop, const std::atomic<bool>& drop);
/// The same, also cut short once `dropped()` says so (asked every half millisecond, and all along the last 80
/// microseconds).
bool sleepForStraggler(double seconds, const std::atomic<bool>& stop, const std::function<bool()>& dropped);

} // namespace sgdscope
