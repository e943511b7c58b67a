// The MPI job's watch (core/engines/mpi/PeerWatch) in one process: watches of "ranks" talk over in-memory queues,
// each on its own thread, so ThreadSanitizer sees the watch's threads (mpirun forks, which TSan cannot follow).
// A silent peer is given up after the silence limit and not before, a gone one at once, a remote one that stops
// beating after a stop signal quickly; errors reach rank 0, rank 0's end reaches everyone; beats re-estimate
// a wrong clock offset.
#include "core/engines/mpi/PeerWatch.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTest>

#include <deque>
#include <fstream>
#include <mutex>
#include <thread>

#include <signal.h>
#include <unistd.h>

using namespace sgdscope;

// ThreadSanitizer cannot follow a fork from a threaded process: the tests that start processes skip there.
#if defined(SGDSCOPE_SANITIZE_THREAD)
#define SKIP_IF_FORK_UNDER_TSAN() QSKIP("ThreadSanitizer cannot follow a fork from a threaded process")
#else
#define SKIP_IF_FORK_UNDER_TSAN() (void)0
#endif

namespace {
/// Every rank's mailbox, shared by the ranks' channels.
struct PostOffice
{
    std::mutex mutex;
    std::vector<std::deque<std::pair<int, std::vector<char>>>> boxes;
    std::vector<bool> deaf; // a rank whose mail is dropped (its process hung)
    explicit PostOffice(int ranks)
        : boxes(static_cast<std::size_t>(ranks))
        , deaf(static_cast<std::size_t>(ranks), false)
    {
    }
};

class QueueChannel final : public BeatChannel
{
public:
    QueueChannel(PostOffice& office, int rank)
        : m_office(office)
        , m_rank(rank)
    {
    }
    void send(int to, std::span<const char> bytes) override
    {
        std::lock_guard lock(m_office.mutex);
        if (m_office.deaf[static_cast<std::size_t>(m_rank)])
            return; // a hung process sends nothing
        m_office.boxes[static_cast<std::size_t>(to)].emplace_back(
            m_rank, std::vector<char>(bytes.begin(), bytes.end()));
    }
    bool receive(int& from, std::vector<char>& bytes) override
    {
        std::lock_guard lock(m_office.mutex);
        auto& box = m_office.boxes[static_cast<std::size_t>(m_rank)];
        if (box.empty())
            return false;
        from = box.front().first;
        bytes = std::move(box.front().second);
        box.pop_front();
        return true;
    }

private:
    PostOffice& m_office;
    int m_rank;
};

PeerWatch::Settings settingsFor(int rank, int size, double silence)
{
    PeerWatch::Settings s;
    s.rank = rank;
    s.size = size;
    s.period = 0.01;
    s.silence = silence;
    s.afterSignal = 0.2;
    s.localPids.assign(static_cast<std::size_t>(size), 0);
    return s;
}

/// Waits until `watch` has a problem or `seconds` passed; returns the seconds waited.
double waitForProblem(const PeerWatch& watch, double seconds)
{
    QElapsedTimer clock;
    clock.start();
    while (!watch.hasProblem() && clock.elapsed() < seconds * 1000)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return static_cast<double>(clock.elapsed()) / 1000.0;
}

/// Starts `sleep seconds` (a rank's process, to the watch); its process id, or 0.
long startSleep(QProcess& p, const QString& seconds)
{
    p.start(QStringLiteral("sleep"), {seconds});
    return p.waitForStarted(5000) ? static_cast<long>(p.processId()) : 0;
}

/// Whether the process has ended (gone, or a zombie not yet reaped).
bool ended(long pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line))
        return true;
    const std::size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

/// Rank 0's watch of a job of `pids.size()` ranks whose ranks 1... are these processes (0: on another host),
/// stopped as after a failure (rank 0 stops its watch before it ends the job).
std::unique_ptr<PeerWatch> stoppedRootOf(PostOffice& office, const std::vector<long>& pids)
{
    PeerWatch::Settings s = settingsFor(0, static_cast<int>(pids.size()), 30.0);
    s.localPids = pids;
    auto root = std::make_unique<PeerWatch>(s, std::make_unique<QueueChannel>(office, 0));
    root->stop(false);
    return root;
}

/// A process id that no process has (above the kernel's largest).
long missingPid()
{
    return 4194304L + 17; // pid_max is at most 2^22
}
} // namespace

class TestPeerWatch : public QObject
{
    Q_OBJECT
private slots:
    void beatingPeersAreNeverGivenUp()
    {
        PostOffice office(3);
        std::vector<std::unique_ptr<PeerWatch>> watches;
        for (int r = 0; r < 3; ++r)
            watches.push_back(
                std::make_unique<PeerWatch>(settingsFor(r, 3, 0.3), std::make_unique<QueueChannel>(office, r)));
        QTest::qWait(900); // three silence limits
        for (const auto& w : watches)
            QVERIFY2(!w->hasProblem(), w->problem() ? w->problem()->describe(0.3).c_str() : "");
    }

    void aSilentPeerIsNamedAfterTheSilenceLimitAndNotBefore()
    {
        PostOffice office(3);
        std::vector<std::unique_ptr<PeerWatch>> watches;
        for (int r = 0; r < 3; ++r)
            watches.push_back(
                std::make_unique<PeerWatch>(settingsFor(r, 3, 0.4), std::make_unique<QueueChannel>(office, r)));
        QTest::qWait(100);
        {
            std::lock_guard lock(office.mutex);
            office.deaf[2] = true; // rank 2 hangs
        }
        const double waited = waitForProblem(*watches[0], 5.0);
        const auto problem = watches[0]->problem();
        QVERIFY(problem);
        QCOMPARE(problem->rank, 2);
        QVERIFY(problem->kind == PeerProblem::Kind::Silent);
        QVERIFY2(problem->silentSeconds >= 0.4, qPrintable(QString::number(problem->silentSeconds)));
        QVERIFY2(waited >= 0.35, qPrintable(QString::number(waited))); // not before the limit (its last beat)
        const std::string text = problem->describe(0.4);
        QVERIFY2(text.find("rank 2 sent nothing for") == 0 && text.find("--peer-timeout 0.4") != std::string::npos
                && text.find("dead or hung since") != std::string::npos,
            text.c_str());
        // The others still hear rank 0.
        QVERIFY(!watches[1]->hasProblem());
    }

    void aGonePeerOnThisHostIsNamedAtOnce()
    {
        PostOffice office(2);
        PeerWatch::Settings s = settingsFor(0, 2, 30.0);
        s.localPids[1] = missingPid();
        PeerWatch root(s, std::make_unique<QueueChannel>(office, 0));
        PeerWatch peer(settingsFor(1, 2, 30.0), std::make_unique<QueueChannel>(office, 1));
        const double waited = waitForProblem(root, 5.0);
        QVERIFY2(waited < 1.0, qPrintable(QString::number(waited)));
        const auto problem = root.problem();
        QVERIFY(problem);
        QVERIFY(problem->kind == PeerProblem::Kind::Gone);
        QCOMPARE(problem->rank, 1);
        QVERIFY(problem->describe(30).find("rank 1 is gone: its process ended") == 0);
        // A living process on this host is not gone.
        PostOffice office2(2);
        PeerWatch::Settings alive = settingsFor(0, 2, 30.0);
        alive.localPids[1] = static_cast<long>(::getpid());
        PeerWatch root2(alive, std::make_unique<QueueChannel>(office2, 0));
        PeerWatch peer2(settingsFor(1, 2, 30.0), std::make_unique<QueueChannel>(office2, 1));
        QTest::qWait(300);
        QVERIFY(!root2.hasProblem());
    }

    void afterAStopSignalASilentRemotePeerIsGivenUpQuickly()
    {
        std::atomic<bool> signalled {false};
        PostOffice office(3);
        PeerWatch::Settings s = settingsFor(0, 3, 30.0);
        s.interrupted = [&] { return signalled.load(); };
        s.localPids[1] = static_cast<long>(::getpid()); // rank 1 on this host (alive), rank 2 elsewhere
        PeerWatch root(s, std::make_unique<QueueChannel>(office, 0));
        PeerWatch one(settingsFor(1, 3, 30.0), std::make_unique<QueueChannel>(office, 1));
        PeerWatch two(settingsFor(2, 3, 30.0), std::make_unique<QueueChannel>(office, 2));
        QTest::qWait(100);
        {
            std::lock_guard lock(office.mutex);
            office.deaf[1] = true; // both stop beating: rank 1's process is here and alive, rank 2's unknown
            office.deaf[2] = true;
        }
        QTest::qWait(100);
        QVERIFY(!root.hasProblem()); // far below the silence limit, and no signal yet
        signalled = true;
        const double waited = waitForProblem(root, 5.0);
        QVERIFY2(waited < 1.0, qPrintable(QString::number(waited)));
        const auto problem = root.problem();
        QVERIFY(problem);
        QCOMPARE(problem->rank, 2); // not rank 1: its process is alive here, so it is slow, not gone
        QVERIFY(problem->describe(30).find("after the stop signal") != std::string::npos);
    }

    void errorsReachRankZeroAndItsEndReachesEveryone()
    {
        PostOffice office(3);
        std::vector<std::unique_ptr<PeerWatch>> watches;
        for (int r = 0; r < 3; ++r)
            watches.push_back(
                std::make_unique<PeerWatch>(settingsFor(r, 3, 30.0), std::make_unique<QueueChannel>(office, r)));
        watches[2]->reportError("out of memory during the run");
        waitForProblem(*watches[0], 5.0);
        const auto failed = watches[0]->problem();
        QVERIFY(failed);
        QVERIFY(failed->kind == PeerProblem::Kind::Failed);
        QCOMPARE(QString::fromStdString(failed->describe(30)), QStringLiteral("rank 2: out of memory during the run"));
        watches[0]->endJob(7);
        for (int r = 1; r < 3; ++r) {
            waitForProblem(*watches[static_cast<std::size_t>(r)], 5.0);
            const auto ended = watches[static_cast<std::size_t>(r)]->problem();
            QVERIFY(ended);
            QVERIFY(ended->kind == PeerProblem::Kind::Ended);
            QCOMPARE(ended->exitCode, 7);
        }
    }

    // Rank 0, ending a failed job, leaves only once the ranks on its host have ended: one still reading a message
    // out of its memory (shared memory's single copy) found it gone and Open MPI printed "Read -1, expected 340112,
    // errno = 3" (test_mpi_job, a hung rank in sync, 1 run in 3 under bursty load). A rank stopped (SIGSTOP) is
    // resumed by mpirun once another rank has ended: it is waited for then, and only then.
    void rankZeroWaitsForItsLocalPeersToEnd()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        PostOffice office(3);
        QProcess living;
        QElapsedTimer clock;
        clock.start(); // before it starts: it lives 0.4 s after, however late it is started
        const long pid = startSleep(living, QStringLiteral("0.4"));
        QVERIFY(pid > 0);
        // Rank 1 here, rank 2 on another host (not waited for: nothing reads this host's memory from there).
        QVERIFY(stoppedRootOf(office, {0, pid, 0})->awaitLocalPeersEnded(20.0)); // (false at the limit)
        QVERIFY2(clock.elapsed() >= 400, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(ended(pid));
        living.waitForFinished(5000);
    }
    // A rank here that runs on and never ends (MpiJob waits 3 s): rank 0 leaves at the limit, not before.
    void aRankThatRunsOnIsWaitedForUpToTheLimit()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        PostOffice office(2);
        QProcess running;
        const long pid = startSleep(running, QStringLiteral("30"));
        QVERIFY(pid > 0);
        QElapsedTimer clock;
        clock.start();
        QVERIFY(!stoppedRootOf(office, {0, pid})->awaitLocalPeersEnded(1.0));
        const qint64 ms = clock.elapsed();
        QVERIFY2(ms >= 1000 && ms < 10000, qPrintable(QString::number(ms))); // (the upper bound: far beyond any load)
        QVERIFY(!ended(pid));
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        running.waitForFinished(5000);
    }
    void aStoppedRankIsLeftToMpirunUnlessAnotherEnded()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        PostOffice office(3);
        // Alone and stopped: nobody ends, so mpirun resumes it only once rank 0 has left; rank 0 leaves after a
        // short wait, not after its 20 s limit.
        {
            QProcess stopped;
            const long pid = startSleep(stopped, QStringLiteral("30"));
            QVERIFY(pid > 0);
            ::kill(static_cast<pid_t>(pid), SIGSTOP);
            QElapsedTimer clock;
            clock.start();
            QVERIFY(!stoppedRootOf(office, {0, pid})->awaitLocalPeersEnded(20.0));
            QVERIFY2(clock.elapsed() >= 400 && clock.elapsed() < 10000, qPrintable(QString::number(clock.elapsed())));
            QVERIFY(!ended(pid));
            ::kill(static_cast<pid_t>(pid), SIGKILL);
            ::kill(static_cast<pid_t>(pid), SIGCONT);
            stopped.waitForFinished(5000);
        }
        // Stopped, beside a rank that ends: as mpirun does once a rank has ended, the stopped one is resumed and
        // ended, here a second after the other ended (longer than the wait for a stopped rank alone). Rank 0
        // leaves only after it.
        QProcess stopped;
        QProcess living;
        const long hung = startSleep(stopped, QStringLiteral("30"));
        QVERIFY(hung > 0);
        ::kill(static_cast<pid_t>(hung), SIGSTOP);
        const long pid = startSleep(living, QStringLiteral("0.2"));
        QVERIFY(pid > 0);
        std::atomic<bool> resumed {false};
        std::thread mpirun([&] {
            while (!ended(pid))
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            std::this_thread::sleep_for(std::chrono::seconds(1));
            resumed = true;
            ::kill(static_cast<pid_t>(hung), SIGCONT);
            ::kill(static_cast<pid_t>(hung), SIGTERM);
        });
        const bool all = stoppedRootOf(office, {0, hung, pid})->awaitLocalPeersEnded(20.0);
        const bool wasResumed = resumed.load();
        mpirun.join();
        QVERIFY(all);
        QVERIFY(wasResumed);
        QVERIFY(ended(hung));
        stopped.waitForFinished(5000);
        living.waitForFinished(5000);
    }

    void beatsReestimateAWrongClockOffset()
    {
        PostOffice office(2);
        PeerWatch root(settingsFor(0, 2, 30.0), std::make_unique<QueueChannel>(office, 0));
        PeerWatch::Settings s = settingsFor(1, 2, 30.0);
        s.clockWindow = 0.2;
        s.initialOffset = 5.0; // wrong: both share this process's clock
        PeerWatch peer(s, std::make_unique<QueueChannel>(office, 1));
        peer.setOffset(5.0, 0.05);
        QTest::qWait(700);
        QVERIFY2(std::abs(peer.offsetToRoot()) < 0.01, qPrintable(QString::number(peer.offsetToRoot())));
        QVERIFY(peer.reestimates() >= 1);
        QVERIFY(root.allReestimates()[1] >= 1); // as rank 1 reported it
        QVERIFY2(std::abs(root.offsets()[1]) < 0.01, qPrintable(QString::number(root.offsets()[1])));
    }
};

QTEST_GUILESS_MAIN(TestPeerWatch)
#include "test_peerwatch.moc"
