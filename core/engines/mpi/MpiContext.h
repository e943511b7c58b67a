#pragma once

#include "core/engines/mpi/MpiMessage.h"
#include "core/metrics/Events.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sgdscope {

class PeerWatch;

/// What one rank computed in one mode, counted by that rank itself (summary.json's mpi.ranks).
struct RankWork
{
    int rank = 0;
    long pid = 0;
    std::int64_t computedSamples = 0; // samples whose gradient this rank computed
    std::int64_t updates = 0; // sync: updates it took part in; async: its pushes
    // Its process's threads while it served the mode: seconds on a core, and seconds runnable but waiting for one
    // (the kernel's run-queue delay; -1 where the kernel does not say).
    double onCoreSeconds = -1.0;
    double waitedForACoreSeconds = -1.0;
};

/// This process's place in an MPI job (Open MPI, started by mpirun), and the few MPI operations the MPI
/// engine needs. Every wait polls, so that it never outlives a peer: once the watch runs (startWatch), a
/// wait ends with RunFailure as soon as the watch finds a peer gone, silent for --peer-timeout or failed
/// (PeerWatch); before, a wait is bounded by the timeout and ends the job naming the silent peer.
///
/// Threading: MPI is initialised MPI_THREAD_MULTIPLE (checked): the watch's thread sends and receives its
/// beats on a communicator of its own; every other call is made by the thread that initialised MPI.
class MpiContext
{
public:
    /// The rank and the process count the environment gives this process (0 and 1 if none), before MPI is
    /// initialised.
    static int environmentRank();
    static int environmentSize();

    /// Initialises MPI once (later calls return the same context), asking for MPI_THREAD_MULTIPLE.
    static MpiContext& init();
    /// The thread level MPI granted, and whether it is the one the watch needs; its name ("MPI_THREAD_...").
    bool threadsSupported() const;
    std::string threadLevelName() const;
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
    /// During the run the watch re-estimates the offset from its beats (PeerWatch).
    double toRoot(double localSeconds) const;
    /// On rank 0: each rank's offset to rank 0 (its latest estimate), the round trip the first estimate was
    /// made with (seconds), and how many times each rank's offset was re-estimated since.
    std::vector<double> offsets() const;
    const std::vector<double>& roundTrips() const { return m_roundTrips; }
    std::vector<int> offsetReestimates() const;

    /// Starts the watch (PeerWatch): from now on a peer is given up only when its process is gone, it sent
    /// nothing for `silenceSeconds` (--peer-timeout), or it failed. Collective. `stopSignal` says which signal asked
    /// this process to stop (0: none); on rank 0, `onPeerSignal` hears of another rank's (PeerWatch::Settings).
    void startWatch(double silenceSeconds, std::function<int()> stopSignal = {},
        std::function<void(int rank, int signal)> onPeerSignal = {});
    /// The watch, if started.
    PeerWatch* watch() const { return m_watch.get(); }
    /// Stops the watch (before MPI_Finalize, or before this process leaves; see PeerWatch::stop).
    void stopWatch(bool flush = true);
    /// How long a wait lasts before the watch runs (seconds).
    void setTimeout(double seconds) { m_timeout = seconds; }

    /// Sends bytes to a rank (completes when MPI has taken them; bounded by the timeout).
    void send(const void* data, std::size_t bytes, int to, int tag);
    /// A send that goes on while this rank waits for something else (its answer): the data must stay
    /// untouched until complete() returns. One dropped before it completed (a run that failed) leaves its data to
    /// MPI: from then on no MpiBytes buffer is freed, so its data must be MpiBytes.
    struct PendingSend
    {
        PendingSend() = default;
        PendingSend(PendingSend&& other) noexcept
            : request(std::move(other.request))
            , to(other.to)
        {
            other.request.clear();
        }
        PendingSend& operator=(PendingSend&& other) noexcept
        {
            if (!request.empty())
                markMpiSendAbandoned();
            request = std::move(other.request);
            other.request.clear();
            to = other.to;
            return *this;
        }
        PendingSend(const PendingSend&) = delete;
        PendingSend& operator=(const PendingSend&) = delete;
        ~PendingSend()
        {
            if (!request.empty())
                markMpiSendAbandoned();
        }
        std::vector<char> request; // opaque MPI_Request storage
        int to = -1;
    };
    PendingSend startSend(const void* data, std::size_t bytes, int to, int tag);
    /// Waits for a started send to complete (bounded by the timeout); nothing to do for an empty one.
    void complete(PendingSend& send);
    /// Whether a started send has completed (without waiting; true for an empty one).
    bool done(PendingSend& send);
    /// Receives exactly a message of `from` with `tag` into `data` (at most `bytes`); returns its size.
    std::size_t receive(void* data, std::size_t bytes, int from, int tag);
    /// Receives the first message with `tag` from any of `from` into `buffers[i]` (one per rank in `from`, each
    /// `bytes` long, with a receive posted in each); returns the index into `from` of the one that arrived.
    /// `posted` keeps the posted receives across calls (initially empty).
    struct PostedReceives;
    int receiveAny(PostedReceives& posted);
    /// The same without waiting: the index of a message that has arrived, or -1.
    int testAny(PostedReceives& posted);
    /// Receives the next message of `from` with `tag`, whatever its size.
    std::vector<char> receiveWhole(int from, int tag);
    /// Whether a message of `from` with `tag` waits to be received (without receiving it).
    bool waiting(int from, int tag);
    /// Receives a message of `from` with `tag` that has arrived (as waiting() says), whatever its size, without
    /// asking the watch: a living peer's message is taken even after another peer's problem (a study collects a
    /// point's result from a rank that is well). nullopt if none has arrived.
    std::optional<std::vector<char>> receiveArrived(int from, int tag);

    /// Sends a small integer to every rank from rank 0 and returns it on every rank (a broadcast).
    std::int64_t broadcast(std::int64_t value);
    /// Gathers every rank's text on rank 0 (others get an empty vector).
    std::vector<std::string> gatherText(const std::string& text);
    /// Gathers one 64-bit value from every rank on rank 0 (others get an empty vector).
    std::vector<std::uint64_t> gather(std::uint64_t value);

    /// Ends the whole job: prints the message on this rank's stderr ("sgdscope: ...") and aborts every rank.
    [[noreturn]] void abort(const std::string& message, int code) const;
    /// Finalises MPI (once).
    void finalize();

    /// What every rank computed, as rank 0 collected it at the end of each mode.
    void recordWork(Mode mode, std::vector<RankWork> work) { m_work.emplace_back(mode, std::move(work)); }
    const std::vector<std::pair<Mode, std::vector<RankWork>>>& work() const { return m_work; }

    /// The largest message MPI takes in one call (its counts are int): larger ones are refused.
    static constexpr std::size_t maxMessageBytes = 0x7fffffff;

private:
    MpiContext() = default;
    /// Waits for a request until it completes (see the class comment); `peer` and `what` name it.
    void wait(void* request, int peer, const char* what);
    template<typename Done>
    bool pollUntil(Done&& done) const;
    [[noreturn]] void abortForSilence(int peer, const char* what) const;
    void checkSize(std::size_t bytes, int peer) const;

    int m_rank = 0;
    int m_size = 1;
    int m_threadLevel = 0;
    double m_timeout = 60.0;
    double m_offsetToRoot = 0.0;
    std::vector<double> m_offsets;
    std::vector<double> m_roundTrips;
    std::vector<long> m_localPids; // per rank: its process id if it runs on this host, else 0
    std::vector<char> m_beatComm; // opaque MPI_Comm storage: the watch's communicator
    std::unique_ptr<PeerWatch> m_watch;
    std::vector<std::pair<Mode, std::vector<RankWork>>> m_work;
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
    bool armed = false;
    std::size_t next = 0; // where the next poll starts (round robin)
    /// Posts a receive for every peer (once).
    void arm();
    PostedReceives() = default;
    PostedReceives(const PostedReceives&) = delete;
    PostedReceives& operator=(const PostedReceives&) = delete;
    /// Abandons the receives still posted (see abandon()).
    ~PostedReceives();
    /// Posts (again) the receive for peer index i.
    void post(int i);
    /// Cancels the receives still posted and waits for them (at the end of a run, every peer well).
    void cancel();
    /// Cancels the receives still posted without waiting for any peer (a run that failed, or a wait that threw):
    /// a receive left posted would match a peer's message later, while this process ends the job, and MPI would
    /// fetch it into a buffer freed meanwhile, or from a peer that has ended ("Read -1, expected ..., errno = 3",
    /// Open MPI's shared-memory transport). A receive that a message has already matched cannot be cancelled:
    /// its buffers are then kept until the process ends.
    void abandon();
};

} // namespace sgdscope
