#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace sgdscope {

/// How the processes of a job reach each other for the watch: small messages, sent and received without
/// waiting (an MPI communicator of its own in a job; in-memory queues in tests).
class BeatChannel
{
public:
    virtual ~BeatChannel() = default;
    /// Sends `bytes` to rank `to` without waiting; may drop it if that rank has stopped taking messages.
    virtual void send(int to, std::span<const char> bytes) = 0;
    /// Takes one message that has arrived, if any.
    virtual bool receive(int& from, std::vector<char>& bytes) = 0;
    /// Completes the sends still under way (at the end of a job; bounded).
    virtual void flush() { }
};

/// What went wrong with a peer, as this process's watch saw it.
struct PeerProblem
{
    enum class Kind
    {
        Gone, // its process no longer exists (seen on this host)
        Silent, // no message from it for the silence limit (--peer-timeout), or for a moment after a stop signal
        Failed, // it reported an error of its own
        Ended, // rank 0 ended the job (with `exitCode`)
        Stalled, // this process itself did not run for so long that its peers gave it up (stopped, or starved):
                 // what it sees of them afterwards (gone, silent) is the end of the job, not their failure
    };
    Kind kind = Kind::Silent;
    int rank = -1; // the peer the problem is with
    double silentSeconds = 0.0; // how long nothing came from it
    std::string lastHeard; // when it was last heard from, local wall-clock time HH:MM:SS.mmm
    std::string text; // Failed: its message
    int exitCode = 1; // Ended: the job's exit code

    /// The sentence for the user, e.g. "rank 2 is gone: its process ended (dead or hung since 12:00:01.234)".
    std::string describe(double silenceLimit) const;
};

/// A thread beside the training that tells a silent process from a slow one. Every process sends a small beat
/// every `period` seconds from this thread, whatever its main thread is doing (loading data, evaluating,
/// computing a long step): rank 0 to every other rank, the others to rank 0. A peer is in trouble when
/// - its process is gone (peers on this host are checked by process id: a killed rank is seen at once),
/// - nothing came from it for `silence` seconds (a hung or stopped process, or a lost machine),
/// - after a stop signal (`interrupted()` true), nothing came from it for `afterSignal` seconds: mpirun ends
///   every process a second after a rank died, and the living ones still beat,
/// - it reports an error (reportError on that rank), or rank 0 ends the job (endJob).
/// The first problem is kept; the main thread polls problem() in its waits, so a wait never outlives a peer.
/// A process that did not run itself for about the silence limit (SIGSTOP, a starved machine) was given up by its
/// peers: what it finds once it runs again (rank 0 gone, the others silent) is the job ending because of it, and its
/// problem is then that (Stalled, naming itself), never the peers' failure.
///
/// A stop signal on a rank other than 0 (Settings::stopSignal) is passed on to rank 0 (Settings::onPeerSignal), which
/// ends the job as if it had been signalled itself.
///
/// The beats also carry clock readings (NTP's four timestamps) that re-estimate each rank's offset to rank
/// 0's clock during long runs: every `clockWindow` seconds, the exchange with the shortest round trip gives the
/// new offset if that round trip is at most `clockTrip`.
///
/// Thread-safe: the watch's own thread receives and beats; every public function may be called from the main
/// thread.
class PeerWatch
{
public:
    struct Settings
    {
        int rank = 0;
        int size = 1;
        double period = 0.1;
        double silence = 6.0;
        double afterSignal = 0.5;
        double clockWindow = 10.0;
        double clockTrip = 2e-4;
        double initialOffset = 0.0; // this rank's offset to rank 0 (added to its times)
        std::vector<long> localPids; // per rank: its process id if it runs on this host, else 0
        std::function<bool()> interrupted; // whether a stop signal came
        std::function<void()> onProblem; // called (on the watch's thread) when the first problem is found
        std::function<int()> stopSignal; // the signal that asked this process to stop (0: none)
        std::function<void(int rank, int signal)> onPeerSignal; // rank 0: a rank was asked to stop by `signal`
    };
    PeerWatch(Settings settings, std::unique_ptr<BeatChannel> channel);
    ~PeerWatch();
    PeerWatch(const PeerWatch&) = delete;
    PeerWatch& operator=(const PeerWatch&) = delete;

    double silence() const { return m_settings.silence; }
    bool hasProblem() const { return m_hasProblem.load(std::memory_order_acquire); }
    std::optional<PeerProblem> problem() const;
    /// Waits (at most `maxSeconds`) until the watch has looked at every peer once more after this call, so that a
    /// failure seen first by the main thread (an MPI call that failed) is named after what the watch finds.
    void settle(double maxSeconds = 0.25) const;
    /// On a rank other than 0: tells rank 0 this rank failed, with its message.
    void reportError(const std::string& text);
    /// On rank 0: tells every rank that the job is ending and that rank 0 is writing its files, so that its
    /// silence until endJob is not taken for a hang (its process being gone still is).
    void announceEnding();
    /// On rank 0: tells every rank the job ends with `exitCode`.
    void endJob(int exitCode);
    /// On rank 0, after endJob and with the watch stopped: waits (at most `maxSeconds`, making no MPI call) until
    /// every other rank on this host has ended, so that none is still reading a message out of this process's
    /// memory when it leaves (Open MPI's shared-memory single copy is a read of the sender's memory: a reader that
    /// finds the sender gone prints "Read -1, expected ..., errno = 3"). Ranks that are stopped (SIGSTOP) are not
    /// waited for if they are all that is left and none has ended: only mpirun resumes them, once a rank has ended
    /// (then this one). Returns whether every such rank had ended.
    bool awaitLocalPeersEnded(double maxSeconds);
    /// Stops the thread, after completing what it still sends if `flush` (a job that ends because a peer is gone
    /// makes no more MPI calls than it must: MPI's progress on a dead peer's message can crash the process).
    void stop(bool flush = true);

    /// Sets this rank's offset as estimated by other means, and the longest round trip a re-estimate may have.
    void setOffset(double offset, double longestTrip);
    /// This rank's offset to rank 0's clock (added to its times), kept up to date by the beats.
    double offsetToRoot() const { return m_offset.load(std::memory_order_relaxed); }
    /// On rank 0: every rank's offset as it last reported it (rank 0's is 0).
    std::vector<double> offsets() const;
    /// How many times this rank's offset was re-estimated.
    int reestimates() const;
    /// On rank 0: every rank's count of re-estimates as it last reported it (rank 0's is 0).
    std::vector<int> allReestimates() const;

private:
    void loop();
    void beat(double now);
    void receive(double now);
    /// Looks at every watched peer; `mayReceive`: this turn may still take waiting messages (not after a stall).
    void check(double now, bool mayReceive);
    void setProblem(PeerProblem problem);
    bool processGone(long pid) const { return processState(pid) == 'X'; }
    /// A process's state as /proc/PID/stat has it ('R', 'S', 'T' stopped, ...; 'X' for ended, zombies included).
    char processState(long pid) const;
    /// Whether this process's own stall explains a peer problem found `now` (see the class comment).
    bool givenUpAfterOwnStall(double now) const;
    /// Whether the problem found ends this process's part in MPI (it only leaves, and beats no more).
    bool leavingWithoutMpi() const;
    /// This process did not run from `from` to `to` (steady seconds).
    void noteStall(double from, double to);

    Settings m_settings;
    std::unique_ptr<BeatChannel> m_channel;
    std::thread m_thread;
    mutable std::mutex m_mutex; // guards everything below that the main thread reads, and the channel
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::vector<int> m_watched;
    std::vector<double> m_lastHeard; // per rank, steady seconds
    std::vector<double> m_lastHeardWall; // per rank, wall-clock seconds
    std::vector<double> m_peerSent; // per rank: the sent time of the last beat from it (its clock)
    std::vector<double> m_peerReceived; // per rank: when it arrived (this clock)
    std::vector<double> m_offsets; // rank 0: per rank, as reported
    std::vector<int> m_reestimates; // rank 0: per rank, as reported
    int m_myReestimates = 0;
    double m_signalAt = -1.0;
    bool m_rootEnding = false; // rank 0 announced the end: its silence is not a hang
    bool m_signalPassedOn = false; // a rank other than 0: its stop signal went to rank 0
    double m_stallSeconds = 0.0; // this process's longest time without a turn of the watch (stopped, starved)
    double m_stallEnd = -1.0; // when it ended (steady seconds; < 0: none)
    double m_stallSinceWall = 0.0; // when it began (wall-clock seconds)
    std::uint64_t m_checks = 0; // turns that looked at every peer's process (settle)
    double m_nextProcessCheck = 0.0;
    double m_windowEnd = 0.0;
    double m_bestTrip = 1e300;
    double m_bestOffset = 0.0;
    std::optional<PeerProblem> m_problem;
    std::atomic<bool> m_hasProblem {false};
    std::atomic<double> m_offset {0.0};
};

} // namespace sgdscope
