#pragma once

#include "app/Headless.h"

namespace sgdscope {

/// --progress -: what the window shows of one mode, as JSON lines on standard output (ui/ProgressJson.h),
/// at most about 30 a second, and one after the last slice.
ProgressFactory progressToStandardOutput();

} // namespace sgdscope
