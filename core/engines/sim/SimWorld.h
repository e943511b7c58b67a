#pragma once

#include "core/engines/sim/SimCluster.h"
#include "core/metrics/Events.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace simgrid::s4u {
class Engine;
class Host;
} // namespace simgrid::s4u

namespace sgdscope {

class StarNetwork;

/// Where a simulated run runs: a built-in cluster (with its host speed) or a SimGrid platform file.
struct SimPlatformChoice
{
    ClusterKind cluster = ClusterKind::Datacenter;
    std::string platformFile; // when set, the cluster is ignored
    double hostFlops = nominalHostFlops; // built-in clusters' host speed (Local: measured by the caller)
    Placement placement = Placement::Spread; // how workers take the hosts (built-in hosts have one core each)
    /// Local: what was measured; its memory bandwidth prices applies, tree additions and copies (else 0: they are
    /// flops at the host's speed).
    LocalCalibration calibration;
    /// LocalMpi: what was measured of this machine's Open MPI; its links' latency and bandwidth.
    MpiLinkCalibration mpiLink;
    /// The `local` and `local-mpi` clusters: hosts and memory measured on this machine.
    bool measuresThisMachine() const
    {
        return platformFile.empty() && (cluster == ClusterKind::Local || cluster == ClusterKind::LocalMpi);
    }
    /// `local-mpi`: its messages were measured on this machine's Open MPI.
    bool measuresMpi() const { return platformFile.empty() && cluster == ClusterKind::LocalMpi; }
    bool operator==(const SimPlatformChoice&) const = default;
};

/// How a simulated run's messages are timed: "none" (ideal, local: no messages), "star" (the built-in clusters,
/// local-mpi's measured links among them: StarNetwork), "simgrid" (platform files, or SGDSCOPE_SIM_NETWORK=simgrid:
/// SimGrid's CM02 solver). Throws SgdError on a bad SGDSCOPE_SIM_NETWORK.
std::string networkModelOf(const SimPlatformChoice& choice);

/// The one simulation of this process. SimGrid allows one engine per process and its clock never goes back,
/// so every simulated trainer of a process (sync and async of --mode both) shares this one, each on its own
/// stretch of the clock. Built on first use; single-threaded (the driving thread).
class SimWorld
{
public:
    static SimWorld& get();

    /// Creates the platform the first time (at least `hosts` hosts); afterwards the same choice with at most as
    /// many hosts is fine, anything else throws SgdError.
    void ensurePlatform(const SimPlatformChoice& choice, int hosts);
    const std::vector<simgrid::s4u::Host*>& hosts() const { return m_hosts; }
    /// The hosts of `workers` workers, then of the parameter server if `server` (placeWorkers with the run's
    /// placement); throws SgdError naming --workers if they do not fit. On `local-mpi` the work computed from then on
    /// is at the share of a core each process of that MPI job gets (workers, and the server: MpiLinkCalibration::
    /// coreShare): the trainers place their actors before each simulation.
    std::vector<simgrid::s4u::Host*> place(int workers, bool server);
    /// `local-mpi`: the share of a core the last job placed gets (1 elsewhere).
    double coreShare() const { return m_coreShare; }
    /// The `ideal` cluster (messages take no time at all) and `local` (workers share memory): no messages are
    /// simulated. (`local-mpi` has them: its workers are processes.)
    bool costlessNetwork() const
    {
        return m_built && m_choice.platformFile.empty()
            && (m_choice.cluster == ClusterKind::Local || m_choice.cluster == ClusterKind::Ideal);
    }
    /// The work, in flops at the host's speed, of an operation that does `flops` and moves `bytes` through memory:
    /// on `local` it is priced at the measured memory bandwidth (in the flops the host does meanwhile), elsewhere
    /// as its flops.
    double memoryWork(double flops, double bytes) const;
    /// `local-mpi`: the workers are the MPI engine's processes on this machine.
    bool mpiProcesses() const { return m_built && m_choice.measuresMpi(); }
    /// `local-mpi`: a worker's gradient on its way is a wait for the network, as the MPI engine counts it (its ranks
    /// post the send and wait for the answer meanwhile); elsewhere it is communication.
    SpanKind uploadSpanKind() const
    {
        return m_built && m_choice.measuresMpi() ? SpanKind::WaitNetwork : SpanKind::Communicate;
    }
    /// `local-mpi`: the work of packing a message into its buffer or unpacking it (a copy of `copyBytes` through
    /// memory, as the MPI engine's ranks copy the parameters and gradients into and out of their messages); 0 on the
    /// other clusters.
    double messageCopyWork(double copyBytes) const
    {
        return m_built && m_choice.measuresMpi() ? memoryWork(0.0, copyBytes) : 0.0;
    }
    /// `local`: the hosts' speed was measured on whole worker steps, their chunk additions included (they are not
    /// charged again).
    bool stepsMeasured() const { return m_built && m_choice.measuresThisMachine(); }
    /// Models a message of `bytes` from one host to another, blocking the calling actor until it arrived. Between
    /// two actors of one host it is a hand-over in memory, and takes no simulated time.
    void send(simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t bytes);
    /// The calling actor computes `flops` on its host: at the host's speed (its current pstate and availability
    /// profile), sharing the host's cores with the other actors computing there.
    static void compute(double flops);
    /// A straggler's step: `flops` of work made `factor` times as much (the factor's extra is more work of the same
    /// kind), computed as one execution. Returns when the undelayed share would have ended: the execution's time
    /// split in the proportion of the work (exact while the host's speed holds; under an availability profile
    /// that changes meanwhile, the split is that proportion of the time, the end is exact).
    static double computeDelayed(double flops, double factor);
    /// The calling actor computes `flops` on its host as computeDelayed's execution does, unless another actor
    /// cancels `running` (set while it runs; the caller's, for that actor to find); returns false if it was.
    static bool computeCancellable(double flops, std::shared_ptr<void>& running);
    /// Cancels what computeCancellable runs under `running` (nothing if it ended).
    static void cancel(const std::shared_ptr<void>& running);
    /// Runs an actor's body. An exception it throws (SimGrid would abort the process, or report a deadlock as
    /// the others wait for it) is kept in `failure`, the first one only, and ends every other actor, so that
    /// run() returns and the driver rethrows it: the user sees our message.
    static void guarded(std::exception_ptr& failure, const std::function<void()>& body);
    /// Runs the simulation until every actor has finished; throws SgdError if it stalled with actors waiting.
    void run();
    static double clock();

private:
    SimWorld();
    simgrid::s4u::Engine* m_engine = nullptr;
    bool m_built = false;
    SimPlatformChoice m_choice;
    std::vector<simgrid::s4u::Host*> m_hosts;
    double m_coreShare = 1.0; // local-mpi: of the last job placed (its work is computed at that share of a host)
    double m_stalledAt = -1.0; // the virtual clock when SimGrid found its actors deadlocked, -1 if it did not
    double m_lastStart = 0.0; // when an actor last started work or a message
    /// Built-in clusters with messages: they are timed by StarNetwork (SimGrid's model there, at a cost that does
    /// not grow with the messages in flight), unless SGDSCOPE_SIM_NETWORK=simgrid asks for SimGrid's own solver.
    std::unique_ptr<StarNetwork> m_star;
    std::vector<int> m_hostIndex; // by the host's netpoint id: its index in m_hosts
};

} // namespace sgdscope
