#include "core/engines/mpi/PeerWatch.h"

#include "core/common/Json.h"
#include "core/engines/mpi/MpiMessage.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <thread>

namespace sgdscope {

namespace {
constexpr std::int32_t beatKind = 1;
constexpr std::int32_t errorKind = 2;
constexpr std::int32_t endKind = 3;
constexpr std::int32_t endingKind = 4;
constexpr std::int32_t signalKind = 5;
constexpr auto pollInterval = std::chrono::milliseconds(1);

double steadyNow()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double wallNow()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Local wall-clock time of day, HH:MM:SS.mmm.
std::string timeOfDay(double wallSeconds)
{
    const auto whole = static_cast<std::time_t>(std::floor(wallSeconds));
    std::tm local {};
    localtime_r(&whole, &local);
    char text[32];
    std::snprintf(text, sizeof text, "%02d:%02d:%02d.%03d", local.tm_hour, local.tm_min, local.tm_sec,
        static_cast<int>((wallSeconds - std::floor(wallSeconds)) * 1000));
    return text;
}
} // namespace

std::string PeerProblem::describe(double silenceLimit) const
{
    const std::string who = "rank " + std::to_string(rank);
    switch (kind) {
    case Kind::Gone:
        return who + " is gone: its process ended (dead since " + lastHeard + ", its last message)";
    case Kind::Silent:
        return who + " sent nothing for " + formatNumber(std::round(silentSeconds * 10) / 10) + " s ("
            + (silentSeconds >= silenceLimit ? "--peer-timeout " + formatNumber(silenceLimit)
                                             : std::string("after the stop signal, which a living process outlasts"))
            + "; dead or hung since " + lastHeard + ")";
    case Kind::Failed:
        return who + ": " + text;
    case Kind::Ended:
        return "rank 0 ended the job";
    case Kind::Stalled:
        return who + " did not run for " + formatNumber(std::round(silentSeconds * 10) / 10)
            + " s (stopped or starved since " + lastHeard + "), and the other ranks gave it up after --peer-timeout "
            + formatNumber(silenceLimit) + " s of silence";
    }
    return who;
}

PeerWatch::PeerWatch(Settings settings, std::unique_ptr<BeatChannel> channel)
    : m_settings(std::move(settings))
    , m_channel(std::move(channel))
{
    const auto n = static_cast<std::size_t>(m_settings.size);
    m_settings.localPids.resize(n, 0);
    const double now = steadyNow();
    m_lastHeard.assign(n, now);
    m_lastHeardWall.assign(n, wallNow());
    m_peerSent.assign(n, 0.0);
    m_peerReceived.assign(n, 0.0);
    m_offsets.assign(n, 0.0);
    m_reestimates.assign(n, 0);
    m_offset.store(m_settings.initialOffset);
    m_windowEnd = now + m_settings.clockWindow;
    if (m_settings.rank == 0) {
        for (int r = 1; r < m_settings.size; ++r)
            m_watched.push_back(r);
    } else {
        m_watched.push_back(0);
    }
    m_thread = std::thread([this] { loop(); });
}

PeerWatch::~PeerWatch()
{
    stop();
}

void PeerWatch::stop(bool flush)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping && !m_thread.joinable())
            return;
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
    std::lock_guard lock(m_mutex);
    if (flush)
        m_channel->flush();
}

std::optional<PeerProblem> PeerWatch::problem() const
{
    if (!hasProblem())
        return std::nullopt;
    std::lock_guard lock(m_mutex);
    return m_problem;
}

void PeerWatch::settle(double maxSeconds) const
{
    const double deadline = steadyNow() + maxSeconds;
    std::uint64_t start = 0;
    {
        std::lock_guard lock(m_mutex);
        start = m_checks;
    }
    // Two turns that checked every peer: the one under way may have begun before this call.
    while (!hasProblem() && steadyNow() < deadline) {
        {
            std::lock_guard lock(m_mutex);
            if (m_checks >= start + 2 || m_stopping)
                return;
        }
        std::this_thread::sleep_for(pollInterval);
    }
}

void PeerWatch::reportError(const std::string& text)
{
    MpiMessage out;
    out.put(errorKind);
    out.put(steadyNow());
    out.putText(text);
    std::lock_guard lock(m_mutex);
    m_channel->send(0, out.bytes());
}

void PeerWatch::announceEnding()
{
    MpiMessage out;
    out.put(endingKind);
    out.put(steadyNow());
    std::lock_guard lock(m_mutex);
    for (int r = 1; r < m_settings.size; ++r)
        m_channel->send(r, out.bytes());
    m_channel->flush();
}

void PeerWatch::endJob(int exitCode)
{
    MpiMessage out;
    out.put(endKind);
    out.put(steadyNow());
    out.put(static_cast<std::int32_t>(exitCode));
    std::lock_guard lock(m_mutex);
    for (int r = 1; r < m_settings.size; ++r)
        m_channel->send(r, out.bytes());
    m_channel->flush();
}

bool PeerWatch::awaitLocalPeersEnded(double maxSeconds)
{
    const double start = steadyNow();
    bool anyEnded = false;
    std::vector<char> ended(m_settings.localPids.size(), 0);
    // Stopped ranks are left to mpirun when they are all that is left and none ended for this long: the ranks told
    // to end by endJob end within it (a few scheduler turns). Once one has ended, mpirun's teardown has begun and
    // resumes the stopped ones (SIGCONT, then SIGTERM): they are waited for, as it may resume them late.
    constexpr double quiet = 0.5;
    while (true) {
        const double now = steadyNow();
        bool allEnded = true;
        bool allLeftStopped = true;
        for (std::size_t r = 0; r < m_settings.localPids.size(); ++r) {
            const long pid = m_settings.localPids[r];
            if (static_cast<int>(r) == m_settings.rank || pid <= 0 || ended[r])
                continue;
            const char state = processState(pid);
            if (state == 'X') {
                ended[r] = 1;
                anyEnded = true;
                continue;
            }
            allEnded = false;
            allLeftStopped = allLeftStopped && (state == 'T' || state == 't');
        }
        if (allEnded)
            return true;
        if ((allLeftStopped && !anyEnded && now - start >= quiet) || now - start >= maxSeconds)
            return false;
        std::this_thread::sleep_for(pollInterval);
    }
}

void PeerWatch::setOffset(double offset, double longestTrip)
{
    std::lock_guard lock(m_mutex);
    m_offset.store(offset, std::memory_order_relaxed);
    m_settings.clockTrip = longestTrip;
}

std::vector<double> PeerWatch::offsets() const
{
    std::lock_guard lock(m_mutex);
    return m_offsets;
}

int PeerWatch::reestimates() const
{
    std::lock_guard lock(m_mutex);
    return m_myReestimates;
}

std::vector<int> PeerWatch::allReestimates() const
{
    std::lock_guard lock(m_mutex);
    return m_reestimates;
}

void PeerWatch::loop()
{
    double nextBeat = 0.0;
    double lastTurn = steadyNow();
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        const double now = steadyNow();
        const bool stalled = now - lastTurn > std::max(0.5, 5 * m_settings.period);
        if (stalled)
            noteStall(lastTurn, now);
        lastTurn = now;
        // After a stall, the peers' processes are looked at before any MPI call: a peer that ended meanwhile is
        // found by its process id, and this process then makes no more MPI progress (Open MPI's progress on a
        // dead peer's half-received message prints "Read -1, expected ..., errno = 3" beside our message).
        if (stalled)
            check(now, false);
        if (!leavingWithoutMpi()) {
            receive(now);
            if (now >= nextBeat) {
                beat(now);
                nextBeat = now + m_settings.period;
            }
        }
        check(now, !leavingWithoutMpi());
        m_wake.wait_for(lock, pollInterval, [this] { return m_stopping; });
    }
}

void PeerWatch::beat(double now)
{
    for (const int r : m_watched) {
        const auto k = static_cast<std::size_t>(r);
        MpiMessage out;
        out.put(beatKind);
        out.put(now);
        // The last beat this one answers (NTP's first two timestamps, seen from the other side).
        out.put(m_peerSent[k]);
        out.put(m_peerSent[k] > 0 ? now - m_peerReceived[k] : 0.0);
        out.put(m_offset.load(std::memory_order_relaxed));
        out.put(static_cast<std::int32_t>(m_myReestimates));
        m_channel->send(r, out.bytes());
    }
}

void PeerWatch::receive(double now)
{
    int from = -1;
    std::vector<char> bytes;
    while (m_channel->receive(from, bytes)) {
        if (from < 0 || from >= m_settings.size)
            continue;
        const auto k = static_cast<std::size_t>(from);
        m_lastHeard[k] = now;
        m_lastHeardWall[k] = wallNow();
        try {
            MpiMessageReader in(bytes.data(), bytes.size());
            const auto kind = in.get<std::int32_t>();
            const auto sent = in.get<double>();
            if (kind == errorKind) {
                PeerProblem p;
                p.kind = PeerProblem::Kind::Failed;
                p.rank = from;
                p.text = in.getText();
                setProblem(std::move(p));
            } else if (kind == endingKind) {
                m_rootEnding = true;
            } else if (kind == signalKind) {
                const auto signal = in.get<std::int32_t>();
                if (m_settings.rank == 0 && m_settings.onPeerSignal)
                    m_settings.onPeerSignal(from, signal);
            } else if (kind == endKind) {
                PeerProblem p;
                p.kind = PeerProblem::Kind::Ended;
                p.rank = from;
                p.exitCode = in.get<std::int32_t>();
                setProblem(std::move(p));
            } else if (kind == beatKind) {
                const auto echoSent = in.get<double>();
                const auto echoHeld = in.get<double>();
                const auto offset = in.get<double>();
                const auto reestimates = in.get<std::int32_t>();
                m_peerSent[k] = sent;
                m_peerReceived[k] = now;
                if (m_settings.rank == 0) {
                    m_offsets[k] = offset;
                    m_reestimates[k] = reestimates;
                } else if (from == 0 && echoSent > 0) {
                    // NTP: t1 = echoSent (sent here), t2 = sent - echoHeld (received there), t3 = sent, t4 = now.
                    const double trip = (now - echoSent) - echoHeld;
                    if (trip >= 0 && trip < m_bestTrip) {
                        m_bestTrip = trip;
                        m_bestOffset = ((sent - echoHeld - echoSent) + (sent - now)) / 2;
                    }
                }
            }
        } catch (const SgdError&) {
            // A malformed beat still shows the peer is alive; its contents are ignored.
        }
    }
}

void PeerWatch::check(double now, bool mayReceive)
{
    if (m_settings.rank != 0 && now >= m_windowEnd) {
        if (m_bestTrip <= m_settings.clockTrip) {
            m_offset.store(m_bestOffset, std::memory_order_relaxed);
            ++m_myReestimates;
        }
        m_bestTrip = 1e300;
        m_windowEnd = now + m_settings.clockWindow;
    }
    if (m_settings.rank != 0 && !m_signalPassedOn && m_settings.stopSignal) {
        // A stop signal to this rank alone would leave the job running without it: rank 0 ends the job for it.
        if (const int signal = m_settings.stopSignal(); signal != 0) {
            MpiMessage out;
            out.put(signalKind);
            out.put(now);
            out.put(static_cast<std::int32_t>(signal));
            m_channel->send(0, out.bytes());
            m_signalPassedOn = true;
        }
    }
    if (m_problem)
        return;
    const bool interrupted = m_settings.interrupted && m_settings.interrupted();
    if (interrupted && m_signalAt < 0)
        m_signalAt = now;
    // Peers on this host: whether their process still exists, 50 times a second.
    const bool checkProcesses = now >= m_nextProcessCheck;
    if (checkProcesses)
        m_nextProcessCheck = now + 0.02;
    struct Counted
    {
        std::uint64_t& checks;
        bool counts;
        ~Counted() { checks += counts ? 1 : 0; }
    } counted {m_checks, checkProcesses};
    for (const int r : m_watched) {
        const auto k = static_cast<std::size_t>(r);
        const double silent = now - m_lastHeard[k];
        const long pid = m_settings.localPids[k];
        PeerProblem p;
        if (pid > 0 && checkProcesses && processGone(pid)) {
            // Rank 0 may have ended the job and left between this turn's receive and now: its end message, sent
            // before it left, is read first (else this rank would take the end for a death and say so).
            if (r == 0 && mayReceive) {
                receive(now);
                if (m_problem)
                    return;
            }
            p.kind = PeerProblem::Kind::Gone;
        } else if (r == 0 && m_rootEnding) {
            continue; // rank 0 writes its files and then ends the job: silence is expected
        } else if (silent >= m_settings.silence) {
            p.kind = PeerProblem::Kind::Silent;
        } else if (pid <= 0 && m_signalAt >= 0 && now - m_signalAt >= m_settings.afterSignal
            && silent >= m_settings.afterSignal) {
            // On another host: after a stop signal the living ranks still beat; one that does not is gone.
            p.kind = PeerProblem::Kind::Silent;
        } else {
            continue;
        }
        p.rank = r;
        p.silentSeconds = silent;
        p.lastHeard = timeOfDay(m_lastHeardWall[k]);
        // The stall may have come during this very turn (stopped inside an MPI call): measured again now.
        const double real = steadyNow();
        if (real - now > std::max(0.5, 5 * m_settings.period))
            noteStall(now, real);
        if (givenUpAfterOwnStall(real)) {
            p.kind = PeerProblem::Kind::Stalled;
            p.rank = m_settings.rank;
            p.silentSeconds = m_stallSeconds;
            p.lastHeard = timeOfDay(m_stallSinceWall);
        }
        setProblem(std::move(p));
        return;
    }
}

void PeerWatch::noteStall(double from, double to)
{
    // This process did not run (it was stopped, or starved): its peers' silence is its own, not theirs.
    for (double& heard : m_lastHeard)
        heard = std::max(heard, to);
    if (to - from >= m_stallSeconds || to - m_stallEnd > m_settings.silence) {
        m_stallSeconds = to - from;
        m_stallSinceWall = wallNow() - (steadyNow() - from);
    }
    m_stallEnd = to;
}

bool PeerWatch::leavingWithoutMpi() const
{
    // Rank 0 goes on beating to the living ranks while it writes its files; the others, once rank 0 is gone or
    // this process was given up, only leave.
    return m_problem
        && (m_problem->kind == PeerProblem::Kind::Stalled
            || (m_settings.rank != 0 && m_problem->kind == PeerProblem::Kind::Gone));
}

bool PeerWatch::givenUpAfterOwnStall(double now) const
{
    // The peers hear nothing from the last beat before the stall to the first after it: up to a beat period
    // longer than the stall itself. A problem soon after such a stall is the job ending because of it.
    const double longEnough = m_settings.silence - m_settings.period - 2 * 1e-3;
    return m_stallEnd >= 0 && m_stallSeconds >= longEnough && now - m_stallEnd <= std::max(2.0, 20 * m_settings.period);
}

void PeerWatch::setProblem(PeerProblem problem)
{
    if (m_problem)
        return;
    m_problem = std::move(problem);
    m_hasProblem.store(true, std::memory_order_release);
    if (m_settings.onProblem)
        m_settings.onProblem();
}

char PeerWatch::processState(long pid) const
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat)
        return 'X';
    std::string line;
    std::getline(stat, line);
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size())
        return '?';
    const char state = line[close + 2];
    return state == 'Z' ? 'X' : state;
}

} // namespace sgdscope
