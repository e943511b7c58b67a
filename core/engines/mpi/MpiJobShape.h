#pragma once

#include "core/metrics/Events.h"

namespace sgdscope {

/// How many workers an MPI job of `processes` has in `mode`: every process in sync and local-sgd, all but rank 0
/// (the parameter server) in the others. (The front ends ask core/run/EngineShapes.h.)
inline int mpiWorkersFor(Mode mode, int processes)
{
    return mode == Mode::Sync || mode == Mode::LocalSgd ? processes : processes - 1;
}

} // namespace sgdscope
