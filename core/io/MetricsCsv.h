#pragma once

#include "core/metrics/RunRecorder.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// metrics.csv: one row per kept update point and per evaluation, for each mode.
/// `virtualClock`: the runs were simulated, so the seconds column is "virtual_seconds".
std::string metricsCsv(const std::vector<std::pair<Mode, const RunRecorder*>>& runs, bool virtualClock = false);

} // namespace sgdscope
