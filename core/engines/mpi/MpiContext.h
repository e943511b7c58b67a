#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sgdscope {

/// This process's place in an MPI job (Open MPI, started by mpirun), and the few MPI operations the MPI
/// engine needs, each bounded in time: a peer that does not answer within the timeout ends the whole job
/// with a message naming it (MPI_Abort), so that a dead or hung rank never leaves the others waiting forever.
///
/// Threading: MPI is initialised FUNNELED; only the thread that initialised it calls these.
class MpiContext
{
public:
    /// Whether this process was started by mpirun (its environment says so), before MPI is initialised.
    static bool launchedByMpirun();
    /// The rank the environment gives this process (0 if none), before MPI is initialised.
    static int environmentRank();

    /// Initialises MPI once (later calls return the same context).
    static MpiContext& init();
    static bool initialised();
    static MpiContext& get();

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    bool isRoot() const { return m_rank == 0; }

    /// This process's steady clock, in seconds.
    static double now();
    /// Estimates every rank's clock offset to rank 0 (Cristian's method: the ping-pong with the shortest round
    /// trip of 50). Collective. Afterwards toRoot() converts this rank's times to rank 0's clock.
    void estimateClockOffsets();
    double toRoot(double localSeconds) const { return localSeconds + m_offsetToRoot; }
    /// On rank 0: each rank's offset to rank 0 and the round trip it was estimated with (seconds).
    const std::vector<double>& offsets() const { return m_offsets; }
    const std::vector<double>& roundTrips() const { return m_roundTrips; }

    /// How long a rank waits for a peer before it declares it dead or hung (seconds; --peer-timeout).
    void setTimeout(double seconds) { m_timeout = seconds; }
    double timeout() const { return m_timeout; }

    /// Sends bytes to a rank (completes when MPI has taken them; bounded by the timeout).
    void send(const void* data, std::size_t bytes, int to, int tag);
    /// A send that goes on while this rank waits for something else (its answer): the data must stay
    /// untouched until complete() returns.
    struct PendingSend
    {
        std::vector<char> request; // opaque MPI_Request storage
        int to = -1;
    };
    PendingSend startSend(const void* data, std::size_t bytes, int to, int tag);
    /// Waits for a started send to complete (bounded by the timeout); nothing to do for an empty one.
    void complete(PendingSend& send);
    /// Receives exactly a message of `from` with `tag` into `data` (at most `bytes`); returns its size.
    std::size_t receive(void* data, std::size_t bytes, int from, int tag);
    /// Receives the first message with `tag` from any of `from` into `buffers[i]` (one per rank in `from`, each
    /// `bytes` long, with a receive posted in each); returns the index into `from` of the one that arrived.
    /// `posted` keeps the posted receives across calls (initially empty).
    struct PostedReceives;
    int receiveAny(PostedReceives& posted);

    /// Sends a small integer to every rank from rank 0 and returns it on every rank (a broadcast).
    std::int64_t broadcast(std::int64_t value);
    /// Gathers one 64-bit value from every rank on rank 0 (others get an empty vector).
    std::vector<std::uint64_t> gather(std::uint64_t value);

    /// Ends the whole job: prints the message on this rank's stderr ("sgdscope: ...") and aborts every rank.
    [[noreturn]] void abort(const std::string& message, int code) const;
    /// Finalises MPI (once).
    void finalize();

private:
    MpiContext() = default;
    /// Waits for a request until it completes; on timeout aborts naming `peer` (what: "a message from").
    void wait(void* request, int peer, const char* what);
    [[noreturn]] void abortForSilence(int peer, const char* what) const;

    int m_rank = 0;
    int m_size = 1;
    double m_timeout = 8.0;
    double m_offsetToRoot = 0.0;
    std::vector<double> m_offsets;
    std::vector<double> m_roundTrips;
    bool m_finalized = false;
};

/// Receives posted with MPI_Irecv, one per peer, for MpiContext::receiveAny.
struct MpiContext::PostedReceives
{
    std::vector<int> from;
    int tag = 0;
    std::vector<std::vector<char>> buffers;
    std::vector<std::size_t> sizes; // of the message received into each buffer
    std::vector<char> requests; // opaque MPI_Request storage
    /// Since when each peer is expected to answer (to name the one that takes longest; +infinity: not expected).
    std::vector<double> postedAt;
    bool armed = false;
    std::size_t next = 0; // where the next poll starts (round robin)
    /// Posts a receive for every peer (once).
    void arm();
    /// Posts (again) the receive for peer index i.
    void post(int i);
    /// Cancels the receives still posted (at the end of a run).
    void cancel();
};

} // namespace sgdscope
