#include "core/engines/threads/StragglerSleep.h"

#include "core/common/Cancellation.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>

#include <sys/prctl.h>

namespace sgdscope {

namespace {
constexpr double spinSeconds = 80e-6;
constexpr double pieceSeconds = 0.02;
constexpr double dropPieceSeconds = 0.0005;

bool stopping(const std::atomic<bool>& stop, const std::function<bool()>* drop)
{
    return stop.load(std::memory_order_relaxed) || (drop && (*drop)()) || cancellationRequested();
}

bool sleepFor(double seconds, const std::atomic<bool>& stop, const std::function<bool()>* drop);

void sleepUntil(const timespec& deadline)
{
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) { }
}
} // namespace

bool sleepForStraggler(double seconds, const std::atomic<bool>& stop)
{
    return sleepFor(seconds, stop, nullptr);
}

bool sleepForStraggler(double seconds, const std::atomic<bool>& stop, const std::atomic<bool>& drop)
{
    const std::function<bool()> dropped = [&drop] { return drop.load(std::memory_order_acquire); };
    return sleepFor(seconds, stop, &dropped);
}

bool sleepForStraggler(double seconds, const std::atomic<bool>& stop, const std::function<bool()>& dropped)
{
    return sleepFor(seconds, stop, &dropped);
}

namespace {
bool sleepFor(double seconds, const std::atomic<bool>& stop, const std::function<bool()>* drop)
{
    if (!(seconds > 0))
        return true;
    using Clock = std::chrono::steady_clock;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    if (seconds > spinSeconds) {
        // Ask the kernel for precise wake-ups on this thread (the default 50 us slack would swamp them).
        thread_local bool slackSet = false;
        if (!slackSet) {
            ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
            slackSet = true;
        }
        timespec now {};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        const double start = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
        const double wakeAt = start + seconds - spinSeconds;
        for (double at = start; at < wakeAt;) {
            if (stopping(stop, drop))
                return false;
            // A drop (backup) is noticed within half a millisecond: the team waits for it.
            at = std::min(wakeAt, at + (drop ? dropPieceSeconds : pieceSeconds));
            timespec deadline {};
            deadline.tv_sec = static_cast<time_t>(std::floor(at));
            deadline.tv_nsec = static_cast<long>((at - std::floor(at)) * 1e9);
            sleepUntil(deadline);
        }
    }
    while (Clock::now() < end) {
        if (drop && (*drop)())
            return false;
    }
    return true;
}
} // namespace

} // namespace sgdscope
