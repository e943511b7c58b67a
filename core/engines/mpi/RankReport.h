#pragma once

#include "core/common/ThreadCoreTime.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/metrics/Events.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <unistd.h>

namespace sgdscope {

/// A rank's spans as worker `worker`: measured on its own clock, recorded on rank 0's (MpiContext::toRoot), so that
/// rank 0 can put every rank's spans in one order. The same for every MPI mode; each mode splits its waits its way.
struct RankSpans
{
    MpiContext& mpi;
    int worker;
    std::vector<Span> spans;

    /// A span from `localStart` to `localEnd` of this rank's clock (nothing if it is empty); `culprit`: the worker
    /// it waited for (-1: nobody in particular; never itself).
    void add(SpanKind kind, double localStart, double localEnd, int samples = 0, int culprit = -1)
    {
        if (localEnd > localStart)
            spans.push_back({worker, kind, mpi.toRoot(localStart), mpi.toRoot(localEnd), samples,
                culprit == worker ? -1 : culprit});
    }
    /// The same for times already on rank 0's clock.
    void addRoot(SpanKind kind, double start, double end, int samples = 0, int culprit = -1)
    {
        if (end > start)
            spans.push_back({worker, kind, start, end, samples, culprit == worker ? -1 : culprit});
    }
    /// A wait (this rank's clock) for a message the sender started sending at `sentRoot` (rank 0's clock): waiting for
    /// the sender until then (`peerWait`, naming `culprit`: the worker it waited for, -1: nobody in particular), for
    /// the network after.
    void addWait(SpanKind peerWait, double localStart, double localEnd, double sentRoot, int culprit)
    {
        const double start = mpi.toRoot(localStart);
        const double end = mpi.toRoot(localEnd);
        const double sent = std::clamp(sentRoot, start, end);
        addRoot(peerWait, start, sent, 0, culprit);
        addRoot(SpanKind::WaitNetwork, sent, end);
    }
};

/// This process's threads' time on a core and waiting for one since it was made (summed over its threads,
/// /proc/self/task/*/schedstat): how much the operating system kept the rank from running while it served a mode.
class CoreTimeSince
{
public:
    /// (on a core, waiting for one) in seconds since construction; (-1, -1) where the kernel does not say.
    std::pair<double, double> elapsed() const
    {
        const auto now = coreTimeOfThisProcess();
        if (now.first < 0 || m_start.first < 0)
            return {-1.0, -1.0};
        return {now.first - m_start.first, now.second - m_start.second};
    }

private:
    std::pair<double, double> m_start = coreTimeOfThisProcess();
};

/// Rank `rank`'s row, as this process counted it (rank 0's own).
inline RankWork rankWork(int rank, std::int64_t computedSamples, std::int64_t updates, const CoreTimeSince& cpu)
{
    const auto [onCore, waited] = cpu.elapsed();
    return {rank, static_cast<long>(::getpid()), computedSamples, updates, onCore, waited};
}

/// A worker rank's last message ends with what it computed, counted there (rank 0 reports it beside its own):
/// its process id, the samples whose gradient it computed, the updates (sync) or pushes it took part in, and its
/// threads' time on a core and waiting for one while it served the mode.
inline void putRankWork(MpiMessage& out, std::int64_t computedSamples, std::int64_t updates, const CoreTimeSince& cpu)
{
    const auto [onCore, waited] = cpu.elapsed();
    out.put(static_cast<std::int64_t>(::getpid()));
    out.put(computedSamples);
    out.put(updates);
    out.put(onCore);
    out.put(waited);
}

/// Rank 0 reads what putRankWork wrote, for rank `rank`.
inline RankWork takeRankWork(MpiMessageReader& in, int rank)
{
    RankWork work;
    work.rank = rank;
    work.pid = in.get<std::int64_t>();
    work.computedSamples = in.get<std::int64_t>();
    work.updates = in.get<std::int64_t>();
    work.onCoreSeconds = in.get<double>();
    work.waitedForACoreSeconds = in.get<double>();
    return work;
}

} // namespace sgdscope
