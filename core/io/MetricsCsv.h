#pragma once

#include "core/metrics/RunMetrics.h"
#include "core/metrics/RunRecorder.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// metrics.csv: one row per kept update point and per evaluation, for each mode.
/// `virtualClock`: the runs were simulated, so the seconds column is "virtual_seconds".
/// `workers` (optional, one per run): each worker's totals, as "worker" rows after the mode's updates: its wall
/// seconds, its idle (its own waits: wait_seconds) and the others' waits named after it (made_others_wait_seconds).
std::string metricsCsv(const std::vector<std::pair<Mode, const RunRecorder*>>& runs, bool virtualClock = false,
    const std::vector<const RunMetrics*>& workers = {});

} // namespace sgdscope
