#pragma once

// The event stream: what every engine (threads, simulated cluster, MPI) reports of what happened, and the
// only input of every figure (RunMetrics derives idle, busy, staleness, waits and throughput from it; the
// recorder, metrics.csv, the trace and the window's charts show it).

#include "core/common/NamedValues.h"

#include <array>
#include <cstdint>

namespace sgdscope {

/// The training strategy. Sync and async are the two ends of the spectrum; the modes between them are strategies
/// over the same math and the same event stream (DESIGN.md, "Modes between sync and async").
enum class Mode
{
    Sync, // every update waits for every worker: large-batch gradient descent, made parallel
    Async, // every worker applies its gradient as soon as it is done: nobody waits, gradients are stale
    Backup, // sync that applies the first P - B gradients of each update and drops the rest (Chen et al. 2016)
    DcAsgd, // async whose gradient is delay-compensated, g + lambda g*g*(w_now - w_read) (Zheng et al. 2017)
    Ssp, // async whose workers may be at most S updates ahead of the slowest (Ho et al. 2013)
    LocalSgd, // each worker takes H steps on its own model, then the models are averaged (Lin et al. 2018)
};
inline constexpr NameTable<Mode, 6> modeNames {{{"sync", Mode::Sync}, {"async", Mode::Async}, {"ssp", Mode::Ssp},
    {"backup", Mode::Backup}, {"local-sgd", Mode::LocalSgd}, {"dc-asgd", Mode::DcAsgd}}};
inline const char* modeName(Mode m)
{
    for (const auto& entry : modeNames) {
        if (entry.value == m)
            return entry.name.data(); // the names are string literals
    }
    return "?";
}
/// Sync-like modes train in team-wide updates (one window per update, the wait distribution is theirs; local-sgd's
/// update is a round of H local steps and an averaging);
/// the others push worker by worker (staleness is theirs).
inline constexpr bool isSyncLike(Mode m)
{
    return m == Mode::Sync || m == Mode::Backup || m == Mode::LocalSgd;
}
/// The modes whose updates have a wait to show: the sync-like ones (how long the worker that waited longest in an
/// update waited for the slowest) and ssp (how long the bound held a push's worker back before it started it).
/// ssp has staleness as well.
inline constexpr bool hasUpdateWaits(Mode m)
{
    return isSyncLike(m) || m == Mode::Ssp;
}

/// What a worker was doing during a span of time. The wait kinds are its idle time; compute and the
/// injected straggler delay are its busy time.
enum class SpanKind : std::uint8_t
{
    Compute, // forward and backward passes of its chunks
    Delay, // injected straggler delay (the worker is slow, not idle)
    WaitBarrier, // sync: for the slowest worker (and to be started with the others)
    WaitLock, // async: for the parameter lock
    WaitRead, // for a parameter read to arrive (a parameter server's reply)
    WaitSlice, // async: at the start and end of a time slice of the window, while others finish
    WaitNetwork, // across processes: for a message
    Apply, // combining gradients and applying the update, including momentum and any optimizer work
    Communicate, // copying or sending parameters and gradients (a snapshot read, a send)
};
inline constexpr int spanKindCount = 9;
inline constexpr NameTable<SpanKind, spanKindCount> spanKindNames {
    {{"compute", SpanKind::Compute}, {"delay", SpanKind::Delay}, {"barrier", SpanKind::WaitBarrier},
        {"lock", SpanKind::WaitLock}, {"read", SpanKind::WaitRead}, {"slice", SpanKind::WaitSlice},
        {"network", SpanKind::WaitNetwork}, {"apply", SpanKind::Apply}, {"communicate", SpanKind::Communicate}}};
inline constexpr bool isWait(SpanKind k)
{
    return k == SpanKind::WaitBarrier || k == SpanKind::WaitLock || k == SpanKind::WaitRead || k == SpanKind::WaitSlice
        || k == SpanKind::WaitNetwork;
}
inline constexpr bool isBusy(SpanKind k)
{
    return k == SpanKind::Compute || k == SpanKind::Delay;
}

/// A timed span of one worker, in seconds of its mode's clock (which advances only while the mode trains).
struct Span
{
    int worker = 0;
    SpanKind kind = SpanKind::Compute;
    double start = 0.0;
    double end = 0.0;
    int samples = 0; // Compute: the samples it computed
    int culprit
        = -1; // a wait: the worker it waited for (the last to arrive, the lock holder), -1: nobody in particular
    double seconds() const { return end - start; }
};

/// A stretch of the mode's clock during which `workers` workers (0 .. workers-1) were members of the team:
/// one sync update, or one async time slice. Each member's wall time grows by its length; its spans in it
/// account for that time, and what they do not cover is reported as unaccounted.
struct WorkWindow
{
    double start = 0.0;
    double end = 0.0;
    int workers = 0;
};

/// One update (sync) or one push (async).
struct UpdateEvent
{
    Mode mode = Mode::Sync;
    std::int64_t index = 0; // 0-based: the n-th update applied in this mode (for one not applied: the next)
    int worker = -1; // async: who pushed it; sync: -1 (everybody)
    std::int64_t versionRead = 0; // updates applied when its parameters were read
    std::int64_t versionApplied = 0; // updates applied before it was (staleness = applied - read)
    int samples = 0; // in this update
    std::int64_t samplesSeen = 0; // by the mode, after it
    double seconds = 0.0; // the mode's clock when it was applied
    double batchLoss = 0.0; // loss of its samples at the parameters it was computed on
    bool applied = true; // false: its loss was not finite, the run stopped (divergence)
    double learningRate = 0.0; // the learning rate it was applied with (0: not reported)
    // backup: the gradients dropped from this update (their workers came last) and their samples
    int droppedGradients = 0;
    int droppedSamples = 0;
    double compensation = -1.0; // dc-asgd: |compensation term| / |gradient| of this push (< 0: none)
    double modelSpread = -1.0; // local-sgd: the models' mean distance from their average before it (< 0: none)
    // ssp: its worker's clock (pushes applied) minus the slowest's as it started (< 0: none)
    std::int64_t clockLead = -1;
    // ssp: how long the bound held its worker back before it started this push, seconds (< 0: none)
    double boundWait = -1.0;
};

/// What RunMetrics derives for one update, handed to observers with the event.
struct UpdateFigures
{
    std::int64_t staleness = 0;
    /// Sync: how long the worker that waited longest in this update waited (for the slowest one); async: 0.
    double waitSeconds = 0.0;
};

/// The loss (and accuracy) on the whole training set, and on the held-out test set where there is one,
/// every so often (outside the mode's clock).
struct EvaluationRecord
{
    Mode mode = Mode::Sync;
    std::int64_t index = 0; // updates applied so far
    std::int64_t samples = 0;
    double seconds = 0.0;
    double trainLoss = 0.0;
    double trainAccuracy = -1.0; // classification only, else < 0
    bool hasTest = false; // the data set has a held-out test set
    double testLoss = 0.0;
    double testAccuracy = -1.0; // classification with a test set only, else < 0
};

} // namespace sgdscope
