#pragma once

#include <algorithm>

#include "core/common/NamedValues.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sgdscope {

/// The built-in simulated clusters. Every one is a star: each host has its own full-duplex link to one
/// switch, so a message from host i to host j crosses link i then link j (twice the link latency), and
/// messages contend only on the links they share (e.g. every worker's link into a parameter server's).
enum class ClusterKind
{
    Ideal, // equal hosts, network without cost: the textbook model
    Local, // hosts as fast as a worker of this machine (measured at start); in memory: no messages, copies and
           // applies at this machine's memory bandwidth
    LocalMpi, // Local's hosts, and messages timed as this machine's Open MPI carries them (measured at start by a
              // ping-pong under mpirun): the MPI engine's processes on this machine
    Datacenter, // 10 Gb/s links, 10 us per link (20 us host to host)
    Wan, // 1 Gb/s links, 15 ms per link (30 ms host to host)
};
inline constexpr NameTable<ClusterKind, 5> clusterNames {{{"ideal", ClusterKind::Ideal}, {"local", ClusterKind::Local},
    {"local-mpi", ClusterKind::LocalMpi}, {"datacenter", ClusterKind::Datacenter}, {"wan", ClusterKind::Wan}}};

/// A host speed for clusters that do not measure this machine: 50 Gflop/s, the order of what one AVX-512 core
/// sustains on a GEMM-bound training step (fashion-mnist's model is 1.007 Mflop per sample forward and backward,
/// SimCost::flopsPerSample; 50 Gflop/s is 50k samples a second on one host).
inline constexpr double nominalHostFlops = 50e9;

/// How much one slice of a simulated run simulates before its results are reported (its spans and pushes are
/// kept until then): sync, at most this many worker steps (workers x updates, at least one update); async, at most
/// this many pushes.
inline constexpr std::int64_t simSyncWorkerStepsPerSlice = 65536;
/// Updates a simulated sync-like slice takes at most (sync, backup): 1,024, at most simSyncWorkerStepsPerSlice worker
/// steps and 65,536 samples, at least one.
inline std::int64_t simSyncUpdatesPerSlice(int workers, int batch)
{
    const std::int64_t steps = simSyncWorkerStepsPerSlice / std::max(1, workers);
    return std::max<std::int64_t>(1, std::min<std::int64_t>({1024, steps, 65536 / std::max(1, batch)}));
}
inline constexpr std::int64_t simAsyncPushesPerSlice = 262144;

/// How a run's workers (and async's parameter server, after them) are placed on the platform's hosts, taken in
/// the platform's order. Several actors on one host share its cores as SimGrid shares them: each computation
/// gets at most one core's speed, and more computations than cores split the host's speed between them.
enum class Placement
{
    Spread, // one worker per host: worker w on host w, the server on host P (every built-in host has one core)
    Pack, // workers fill each host's cores in order (a 4-core host takes 4 workers), the server the next free core
};
inline constexpr NameTable<Placement, 2> placementNames {{{"spread", Placement::Spread}, {"pack", Placement::Pack}}};

/// Places `workers` workers, and a server if `server`, on hosts with `coresPerHost` cores each. Fills `hostOf`
/// (the workers' host indices, then the server's) and returns "", or returns why the hosts are too few.
std::string placeWorkers(
    const std::vector<int>& coresPerHost, int workers, bool server, Placement placement, std::vector<int>& hostOf);

/// What the `local` cluster measured on this machine at the start of the run (core/run/LocalCalibration.h).
struct LocalCalibration
{
    double hostFlops = 0.0; // one worker's speed on this model: flops per sample / the median compute span per sample
    double medianSecondsPerSample = 0.0; // of the compute spans measured
    double spread = 0.0; // (75th - 25th percentile) / median, of the spans' seconds per sample
    int spans = 0; // compute spans measured
    int threads = 0; // workers the threads engine ran (min(P, this machine's threads))
    double memoryBytesPerSecond = 0.0; // a copy of the parameters' size here, bytes read and written per second
    /// Of the time this process's threads wanted a core while measuring, the share they waited for one (run-queue
    /// delay, /proc/self/task/*/schedstat); -1 where the kernel does not say.
    double waitedForACoreShare = -1.0;
    /// Measured on a machine too busy for the figures to mean what this machine does when it is quiet.
    bool busy() const { return waitedForACoreShare > 0.2 || spread > 0.5; }
    bool operator==(const LocalCalibration&) const = default;
};

/// What the `local-mpi` cluster measured of this machine's Open MPI at the start of the run
/// (core/run/MpiLinkCalibration.h): a ping-pong between ranks 0 and 1 of an mpirun job of as many processes as the
/// modelled job (the others poll, as the MPI engine's waits do), at a small size and at the run's message size.
struct MpiLinkCalibration
{
    int processes = 0; // of the probe's job (the largest modelled MPI job's)
    int cores = 0; // this machine's, that this process may run on (its CPU affinity)
    /// One-way time of a small message: half the median round trip.
    double latencySeconds = 0.0;
    double latencySpread = 0.0; // (75th - 25th percentile) / median, of its round trips
    std::uint64_t smallBytes = 0;
    /// At the run's message size (at least 64 KiB): bytes / (half its median round trip - latencySeconds), so that
    /// a message of `messageBytes` takes latencySeconds + messageBytes / bandwidth: its measured one-way time.
    double bandwidthBytesPerSecond = 0.0;
    double bandwidthSpread = 0.0; // of its round trips, as latencySpread
    std::uint64_t messageBytes = 0;
    double messageSeconds = 0.0; // half the median round trip at messageBytes
    int roundTrips = 0; // measured at each size (after a warm-up)
    /// The medians gave no bandwidth (the one at the message size not above the small size's: a very busy machine),
    /// so the figures are from the shortest round trips.
    bool fromShortest = false;
    /// The share of a core each process of an MPI job of `jobProcesses` gets on this machine: min(1, cores /
    /// jobProcesses). The MPI engine's ranks poll while they wait (MpiContext: a tight loop for the first 2 ms), so
    /// every process of a job wants a core all the time and the kernel shares the cores among them. Each mode's job
    /// has its own count (sync: its workers; a parameter server's modes: one more).
    double coreShare(int jobProcesses) const
    {
        return jobProcesses > cores && cores > 0 ? static_cast<double>(cores) / jobProcesses : 1.0;
    }
    /// Of the time ranks 0 and 1 wanted a core while they timed, the share they waited for one (the kernel's
    /// run-queue delay of their threads); -1 where the kernel does not say.
    double waitedForACoreShare = -1.0;
    /// Measured on a machine too busy for the figures to mean what its Open MPI does when it is quiet: the ranks
    /// waited for a core more than 20% of the time they wanted one, in a job of no more processes than cores (in a
    /// larger job they wait by design: measured quiet here, 3 processes on 2 cores waited 50%, so it cannot tell),
    /// or the round trips at the message size spread by more than half, or the medians gave no bandwidth.
    bool busy() const
    {
        return (processes <= cores && waitedForACoreShare > 0.2) || bandwidthSpread > 0.5 || fromShortest;
    }
    bool operator==(const MpiLinkCalibration&) const = default;
};

/// `local-mpi` starts its probe in a job of as many processes as the MPI job it models (each polling, about 15 MB):
/// at most this many.
inline constexpr int maxLocalMpiProcesses = 64;

/// One link's figures.
struct LinkFigures
{
    double bandwidth = 0.0; // bytes per second
    double latency = 0.0; // seconds
    bool sharedFreely = false; // FATPIPE: every flow gets the whole bandwidth (no contention)
};

/// What a built-in cluster is made of; `hostFlops` for Local is the measured speed (given by the caller). LocalMpi's
/// links are measured: `measured` (a star's link: half the one-way latency, since a route crosses two links).
LinkFigures linkFiguresOf(ClusterKind kind, const MpiLinkCalibration& measured = {});

/// One line per built-in cluster with its figures, for --help and the README.
std::string clusterFiguresText();

/// The pairs of hosts (indices into the platform's hosts) whose routes a run uses, both ways: sync's reduction
/// tree (child to parent, and the broadcast back), every worker with the parameter server (`async`: the pushing
/// modes', and the team-wide modes' on a parameter server) and, for an all-reduce, every pair of workers;
/// `hostOf` is placeWorkers' answer for the run's workers and server. Two actors on one host exchange their
/// messages in memory: no route needed.
std::vector<std::pair<int, int>> routesNeeded(
    const std::vector<int>& hostOf, int workers, bool sync, bool async, bool allPairs = false);

/// Checks a SimGrid platform file in a child process (SimGrid aborts the process on some errors, e.g. a
/// missing route or a profile file it cannot read, and allows one platform per process): that it loads, that
/// every host computes and every link carries something (a speed or bandwidth of 0 would stop the simulation),
/// that `workers` workers (and a server if `server`) fit on it with `placement`, and that every route the run
/// uses exists. Returns "" if usable, else the reason in one line, naming the host, link or file.
std::string checkPlatformFile(const std::string& path, int workers, bool server, Placement placement, bool sync,
    bool async, bool allPairs = false);

} // namespace sgdscope
