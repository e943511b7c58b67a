#pragma once

#include "core/engines/EngineKind.h"
#include "core/nn/NetworkSpec.h"
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
    bool dcAsgd = false; // a dc-asgd run (MPI: its server keeps the parameters each worker was sent)
    bool backup = false; // a backup run (MPI: its server's parameters still on their way to late workers)
};

/// An upper estimate of what training this model needs in one process besides the data: parameters,
/// momentum, the workers' reduction buffers, snapshots and activations.
double modelMemoryBytes(
    const NetworkSpec& spec, const TrainerSettings& settings, int chunkSize, const MemoryShape& shape);

} // namespace sgdscope
