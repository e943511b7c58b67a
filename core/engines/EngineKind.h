#pragma once

#include "core/common/NamedValues.h"
#include "core/metrics/Events.h"

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

/// The modes an MPI job runs so far, and what is said of the others.
inline constexpr bool runsOnMpi(Mode m)
{
    return m != Mode::Backup;
}
inline constexpr const char* notOnMpiYet = "does not run across MPI processes yet; there, use sync, async, ssp, "
                                           "local-sgd and dc-asgd (backup runs on --engine threads and sim)";

} // namespace sgdscope
