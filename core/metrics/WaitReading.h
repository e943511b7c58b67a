#pragma once

#include <cstdint>
#include <vector>

namespace sgdscope {

/// One worker's part in a sync-like mode's updates: its busy seconds (computing, and any injected delay) and
/// the updates it took part in.
struct WorkerBusy
{
    double busySeconds = 0.0;
    std::int64_t updates = 0;
};

/// What a sync-like mode's wait per update is made of. A wait is a straggler's cost when one worker is much
/// busier per update than the others; it is synchronisation overhead (the barrier's wake-up, the wires) when
/// no worker stands out and every worker computes for a small part of the wait. A new user reading "idle 94%"
/// on a tiny model must learn which of the two it is.
struct WaitReading
{
    double computePerUpdate = 0.0; // the median worker's busy seconds per update
    double busiestPerUpdate = 0.0; // the busiest worker's
    double waitPerUpdate = 0.0; // the mean of the longest wait per update
    bool straggler = false; // the busiest worker is busier than stragglerRatio x the median
    bool overhead = false; // no straggler, and the median compute is under overheadShare x the wait

    static constexpr double stragglerRatio = 1.5;
    static constexpr double overheadShare = 0.25;
};

/// Reads the waits of the workers given (those without updates are left out); meanWait is the mean of the
/// longest wait per update (RunMetrics::updateWaits().mean()).
WaitReading readWaits(const std::vector<WorkerBusy>& workers, double meanWait);

} // namespace sgdscope
