#pragma once

#include "core/io/SummaryJson.h"
#include "core/run/Experiment.h"

namespace sgdscope {

/// What summary.json says of one mode's run (io/SummaryJson.h lays it out): the run's figures, and the
/// simulated cluster's and the mode's own sections. The record points into `result` (its metrics): keep
/// `result` while the record is used.
ModeSummaryRecord summaryRecord(const ModeResult& result);

} // namespace sgdscope
