#pragma once

// The one place where core's records become the window's values (SessionData.h), for the live window
// (SliceObserver) and for the headless run's charts alike.

#include "ui/SessionData.h"

#include "core/engines/Trainer.h"
#include "core/metrics/Events.h"
#include "core/metrics/RunMetrics.h"
#include "core/metrics/RunRecorder.h"

namespace sgdscope::ui {

LossPoint lossPoint(const RunRecorder::UpdatePoint& point);
EvalPoint evalPoint(const EvaluationRecord& evaluation);

/// Where a mode stands.
struct ModeProgress
{
    std::int64_t updates = 0;
    std::int64_t samples = 0;
    double seconds = 0.0;
    bool diverged = false;
    std::int64_t divergedAt = -1;
    bool finished = false;
    TargetReached target;
    double targetAccuracy = -1.0; // the target in effect (< 0: none); an accuracy target needs a test set
    double targetLoss = -1.0;
    double segmentStart = 0.0; // the mode's clock at the last configuration change
    bool virtualClock = false; // a simulated cluster
};

/// Status from the run's figures: the workers' time since the last configuration change (the current
/// team), staleness with its histogram's tail folded into the last entry past `maxStalenessBins`, sync's
/// wait per update. Rates and the latest losses are the caller's (they need the recent past).
ModeStatus modeStatus(const RunMetrics& metrics, const ModeProgress& progress, std::size_t maxStalenessBins = 512);

/// The timeline colour a span kind is drawn in (every wait kind is one "wait").
TimeBin::Kind timeBinKind(SpanKind kind);

} // namespace sgdscope::ui
