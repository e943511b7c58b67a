#pragma once

#include "core/metrics/RunRecorder.h"

#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// Chrome trace-event JSON of the worker timelines (compute, straggler delay, idle, apply spans; one row
/// per worker and mode), loadable in Perfetto and chrome://tracing.
/// `clockNote` names a clock other than this machine's ("virtual time, cluster datacenter") in each mode's
/// name; with `mpiRanks`, rows also name their MPI rank (sync: worker w is rank w; async: rank w + 1, rank 0
/// being the parameter server).
std::string traceJson(const std::vector<std::pair<Mode, const RunRecorder*>>& runs, const std::string& clockNote = {},
    bool mpiRanks = false);

} // namespace sgdscope
