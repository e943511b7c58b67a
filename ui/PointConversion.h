#pragma once

// The one place where core's records become the window's values (SessionData.h), for the live window
// (SliceObserver) and for the headless run's charts alike.

#include "ui/SessionData.h"

#include "core/metrics/Events.h"
#include "core/metrics/RunMetrics.h"
#include "core/metrics/RunRecorder.h"
#include "core/metrics/WaitReading.h"
#include "core/run/Experiment.h"

namespace sgdscope::ui {

LossPoint lossPoint(const RunRecorder::UpdatePoint& point);
EvalPoint evalPoint(const EvaluationRecord& evaluation);

/// Status from where a mode stands and its figures: the workers' time since the last configuration change at
/// `segmentStart` of the mode's clock (the current team), staleness with its histogram's tail folded into the
/// last entry past `maxStalenessBins`, sync's wait per update. Rates and the latest losses are the caller's
/// (they need the recent past).
/// (8,192 entries: 4,096 simulated workers' pushes are about P - 1 stale, at SSP's bound up to (S + 1) x P; with
/// 512, a 1,024-worker run's staleness of ~900 fell whole into the folded last bar.)
ModeStatus modeStatus(const ModeStanding& standing, double segmentStart = 0.0, std::size_t maxStalenessBins = 8192);

/// What a sync-like mode's wait per update is made of (a straggler or synchronisation overhead), from the
/// current workers' busy time per update and the mean wait.
WaitReading waitReading(const ModeStatus& status);

/// The timeline colour a span kind is drawn in (every wait kind is one "wait").
TimeBin::Kind timeBinKind(SpanKind kind);

} // namespace sgdscope::ui
