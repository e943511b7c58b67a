#pragma once

#include "core/engines/sim/SimCluster.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sgdscope {

/// Measures how this machine's Open MPI carries a message, for the simulated `local-mpi` cluster: starts
/// `mpirun -np processes sgdscope-mpi-probe` (the probe found by mpiProbePath(), mpirun on PATH; as root with
/// --allow-run-as-root; --oversubscribe --bind-to none, as the MPI engine's jobs here), whose ranks 0 and 1 time
/// round trips at a small size and at `messageBytes` (at least 64 KiB) while the job's other ranks poll. The one-way
/// latency is half the small size's median round trip; the bandwidth is what makes a message of `messageBytes` take
/// half its median round trip: messageBytes / (that - latency). `cores` is recorded for coreShare(). Blocks for about a
/// second.
///
/// Throws SgdError with one line naming `option` (e.g. "--cluster") and what to install or fix if mpirun or the
/// probe is missing, the probe fails or times out, or its figures are unusable.
MpiLinkCalibration calibrateMpiLinks(int processes, std::uint64_t messageBytes, int cores, const std::string& option);

/// Where the probe is: SGDSCOPE_MPI_PROBE if set, else sgdscope-mpi-probe in the folder of this executable.
std::string mpiProbePath();

/// The figures from the probe's round trips (seconds) at a small size and at `messageBytes`; throws SgdError (naming
/// `option`) if they cannot give a latency and a bandwidth. Exposed for tests.
MpiLinkCalibration mpiLinkFromRoundTrips(std::vector<double> small, std::uint64_t smallBytes, std::vector<double> large,
    std::uint64_t messageBytes, const std::string& option);

} // namespace sgdscope
