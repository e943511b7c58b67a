#pragma once

#include "app/Headless.h"

namespace sgdscope {

/// --progress -: what the window shows of one mode, as JSON lines on standard output (ui/ProgressJson.h),
/// at most about 30 a second, and one after the last slice. The run's first mode fills the batches' first
/// column, its second mode the second (the order of --mode; a third and later share the second).
/// The lines go out on a thread of their own, so that a slow or gone reader never stops the run.
ProgressFactory progressToStandardOutput();
/// Waits until every progress line is written, at most `seconds` (before the process ends); returns whether
/// they were.
bool drainProgress(double seconds);

} // namespace sgdscope
