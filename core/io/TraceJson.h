#pragma once

#include "core/metrics/RunRecorder.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// Chrome trace-event JSON of the worker timelines (compute, straggler delay, idle, apply spans; one row
/// per worker and mode), loadable in Perfetto and chrome://tracing.
std::string traceJson(const std::vector<std::pair<Mode, const RunRecorder*>>& runs);

} // namespace sgdscope
