#pragma once

#include "core/run/Experiment.h"

#include <functional>

namespace sgdscope {

// A fresh simulation for every mode. SimGrid keeps one engine per process and its clock never goes back; its time
// precision follows the clock, so a mode simulated after another (its clock started late) can order
// near-simultaneous events differently from the same mode alone. A simulated mode of a list therefore runs in a
// process of its own (this binary, `sgdscope --mode-child`), which streams the mode's event stream back: its spans,
// updates, evaluations and slices, then its result. The parent derives every figure from that stream by the same
// code as in process (RunMetrics, the observer), so a mode gives the same digest, virtual seconds and figures
// alone as anywhere in a --mode list. This file starts, watches and ends the process; the stream's format is
// ModeStream.h's.

/// Runs `mode` of `run` in a child process and returns its result, reporting its events to `observer` as they
/// come (and, with `sliceSeconds` > 0, calling `afterSlice` after each slice of about that much of its clock, as
/// runMode does). The child prepares the same run from `run.config` with `run.engine` as measured here (the
/// calibrations are not measured again). A stop signal this process gets is passed on: the child ends the mode in
/// order (interrupted). Throws SgdError if the child cannot start or refuses the run; a child that dies gives a
/// failed result with the reason.
ModeResult runModeInChild(const PreparedRun& run, Mode mode, TrainingObserver& observer, double sliceSeconds,
    const std::function<void(const ModeStanding&)>& afterSlice);

/// `sgdscope --mode-child`: reads the request runModeInChild writes on standard input, runs the mode and writes its
/// stream on standard output. Returns the exit code (0 once the result is written, 2 if the request was refused).
int serveModeChild();

/// The program runModeInChild starts: this process's own executable unless set (a test's in-process runs name
/// the sgdscope binary).
void setModeChildProgram(const std::string& path);

} // namespace sgdscope
