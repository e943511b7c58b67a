#pragma once

#include "core/common/NamedValues.h"

namespace sgdscope {

/// Where the workers of a run run.
enum class EngineKind
{
    Threads, // OpenMP threads of this machine, real clock
    Sim, // a simulated cluster in virtual time (SimGrid)
    Mpi, // processes of an MPI job (Open MPI), started by mpirun
};
inline constexpr NameTable<EngineKind, 3> engineNames {
    {{"threads", EngineKind::Threads}, {"sim", EngineKind::Sim}, {"mpi", EngineKind::Mpi}}};

} // namespace sgdscope
