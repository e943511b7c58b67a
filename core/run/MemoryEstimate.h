#pragma once

#include "core/engines/EngineKind.h"
#include "core/nn/MlpSpec.h"
#include "core/train/TrainerSettings.h"

namespace sgdscope {

/// What runs where, for the estimate: the modes run, and the engine (a simulated cluster computes on the
/// machine's threads, not one workspace per worker; an MPI process holds one worker's part).
struct MemoryShape
{
    bool sync = true;
    bool async = true;
    EngineKind engine = EngineKind::Threads;
    int machineThreads = 1;
    bool sideBySide = false; // both modes' trainers at once (the window), else one after the other
    bool localSgd = false; // a local-sgd run among the modes (threads: a model per worker)
};

/// An upper estimate of what training this model needs in one process besides the data: parameters,
/// momentum, the workers' reduction buffers, snapshots and activations.
double modelMemoryBytes(const MlpSpec& spec, const TrainerSettings& settings, int chunkSize, const MemoryShape& shape);

} // namespace sgdscope
