#pragma once

#include "core/metrics/Events.h"
#include "core/train/TrainerSettings.h"

namespace sgdscope {

/// How many workers an MPI job of `processes` has in `mode` on `topology` (the run's resolved wires,
/// TrainerSettings::topology): every process in sync and local-sgd on the tree or the all-reduce, all but rank 0 (the
/// parameter server) in the others, sync and local-sgd on --topology ps included. (The front ends ask
/// core/run/EngineShapes.h.)
inline int mpiWorkersFor(Mode mode, int processes, Topology topology = Topology::Tree)
{
    const bool tree = (mode == Mode::Sync || mode == Mode::LocalSgd) && topology != Topology::ParameterServer;
    return tree ? processes : processes - 1;
}

} // namespace sgdscope
