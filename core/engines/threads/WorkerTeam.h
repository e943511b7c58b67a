#pragma once

#include "core/common/Error.h"
#include "core/train/ReductionPlan.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <string>

namespace sgdscope {

// What the threads engine's trainers share about their OpenMP team of workers: an exception never escapes the
// parallel region (each worker records its own, the driving thread rethrows the first), and each worker needs a
// thread of its own.

/// Seconds from `a` to `b` of the steady clock.
inline double secondsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

/// The failure to record when OpenMP started `got` threads for a team of `team` workers.
inline std::exception_ptr teamSizeFailure(int team, int got)
{
    return std::make_exception_ptr(SgdError(
        "could not start " + std::to_string(team) + " worker threads (OpenMP gave " + std::to_string(got) + ")"));
}

/// Elements [first, last) of `size`: worker w's share of an element-wise step the team makes together (sync's
/// combine and apply, local SGD's average), in whole blocks of 16 floats (64 bytes: no two workers write one cache
/// line), as equal as balancedPart makes them.
struct ElementShare
{
    std::size_t first = 0;
    std::size_t last = 0;
};
inline ElementShare elementShare(std::size_t size, int team, int worker)
{
    constexpr std::size_t alignFloats = 16;
    const std::size_t blocks = (size + alignFloats - 1) / alignFloats;
    const IndexRange mine = balancedPart(static_cast<int>(blocks), team, worker);
    return {static_cast<std::size_t>(mine.begin) * alignFloats,
        std::min(size, static_cast<std::size_t>(mine.end) * alignFloats)};
}

/// The first failure the workers recorded, in worker order (null if none); clears every worker's, so that the next
/// update or slice starts clean. `failureOf(worker)` gives a worker's std::exception_ptr.
template<typename Workers, typename FailureOf>
std::exception_ptr takeFirstFailure(Workers& workers, FailureOf failureOf)
{
    std::exception_ptr first;
    for (auto& worker : workers) {
        std::exception_ptr& failure = failureOf(worker);
        if (!first)
            first = failure;
        failure = nullptr;
    }
    return first;
}

} // namespace sgdscope
