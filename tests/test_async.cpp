// Asynchronous SGD: staleness, the version counter, time accounting, stragglers, convergence, timeline.
#include "TestProblems.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/engines/TrainerFactory.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/engines/threads/ThreadsAsyncTrainer.h"
#include "core/engines/threads/ThreadsSyncTrainer.h"
#include "core/io/TraceJson.h"
#include "core/metrics/RunRecorder.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/Experiment.h"
#include "core/run/RunConfig.h"

#include <QTest>

#include <QElapsedTimer>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <thread>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// Every worker's measured spans cover its wall time (measured separately) but for this residual.
constexpr double kUnaccountedFraction = 0.05;

struct PushLog : TrainingObserver
{
    struct Push
    {
        std::int64_t index, staleness, samples;
        int worker;
        double loss;
        std::int64_t versionRead, versionApplied;
    };
    std::vector<Push> pushes;
    void onUpdate(const UpdateEvent& u, const UpdateFigures& f) override
    {
        pushes.push_back({u.index, f.staleness, u.samplesSeen, u.worker, u.batchLoss, u.versionRead, u.versionApplied});
    }
};

std::shared_ptr<Problem> mediumProblem()
{
    // Enough work per push (about a millisecond) that timing and staleness are about compute, not overhead.
    return blobsProblem(4096, Activation::Tanh, {8, 192, 192, 3});
}

/// Data rows "lock" and "lockfree" in an int column "apply" (AsyncApply).
void addApplyModes()
{
    QTest::addColumn<int>("apply");
    QTest::addRow("lock") << static_cast<int>(AsyncApply::Lock);
    QTest::addRow("lockfree") << static_cast<int>(AsyncApply::LockFree);
}

/// Two workers, worker 0 four times slower, batches of `batch` in chunks of 64, `updates` batches' samples.
TrainerSettings twoWorkersOneStraggler(std::int64_t updates, int batch = 512)
{
    TrainerSettings s;
    s.workers = 2;
    s.batch = batch;
    s.chunk = 64;
    s.learningRate = 0.02;
    s.sampleBudget = updates * batch;
    s.stragglers = {{0, 4.0}};
    return s;
}

/// The longest time any one of this process's threads waited for a CPU while runnable (the kernel's
/// run-queue wait, from /proc/self/task/*/schedstat) since construction: on a busy machine workers lose
/// whole time slices, between their spans too. Threads that end meanwhile are left out. Where the kernel
/// keeps no such figure: 0 (the quiet machine's checks apply), with a warning.
class TakenByTheOs
{
public:
    TakenByTheOs()
        : m_start(runQueueWaits())
    {
    }
    double seconds() const
    {
        const auto now = runQueueWaits();
        if (!now || !m_start) {
            qWarning("no run-queue figures (/proc/self/task/*/schedstat): timing checked as on a quiet machine");
            return 0.0;
        }
        double longest = 0;
        for (const auto& [task, wait] : *now) {
            const auto before = m_start->find(task);
            longest = std::max(longest, wait - (before == m_start->end() ? 0.0 : before->second));
        }
        return longest;
    }

private:
    using Waits = std::map<std::string, double>; // by thread id
    static std::optional<Waits> runQueueWaits()
    {
        Waits waits;
        std::error_code ec;
        for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
            std::ifstream in(task.path() / "schedstat");
            unsigned long long onCpu = 0, waiting = 0;
            if (in >> onCpu >> waiting)
                waits[task.path().filename().string()] = static_cast<double>(waiting) * 1e-9;
            else if (std::filesystem::exists(task.path()))
                return std::nullopt; // no schedstat in this kernel
        }
        if (ec)
            return std::nullopt;
        return waits;
    }
    std::optional<Waits> m_start;
};

/// Every worker's spans, measured by the worker, against its wall time, measured by the driving thread.
/// Spans never add up to more than the wall (nothing counted twice), and cover it but for a small residual
/// and the longest time the operating system kept a thread waiting for a CPU (`osSeconds`): with more
/// workers than cores, or on a machine that something else keeps busy, it deschedules workers between
/// their spans too, and that time is (rightly) unaccounted.
/// The most pushes in a row by one worker with which P equal workers still progress together (a push takes about
/// a millisecond; the scheduler's time slice is a few).
constexpr int kEvenRun = 4;

void checkAccounting(const Trainer& t, double osSeconds)
{
    const bool ownCores = t.settings().workers <= static_cast<int>(std::thread::hardware_concurrency());
    for (const WorkerFigures& w : t.metrics().workers()) {
        QVERIFY2(w.unaccounted() >= -kUnaccountedFraction * w.wallSeconds,
            qPrintable(QStringLiteral("spans exceed the wall by %1 of %2 s").arg(-w.unaccounted()).arg(w.wallSeconds)));
        if (ownCores)
            QVERIFY2(w.unaccounted() <= kUnaccountedFraction * w.wallSeconds + osSeconds,
                qPrintable(QStringLiteral("unaccounted %1 of %2 s (the OS kept a thread waiting %3 s)")
                               .arg(w.unaccounted())
                               .arg(w.wallSeconds)
                               .arg(osSeconds)));
        QVERIFY(w.busy() > 0);
        QVERIFY(w.apply() > 0);
    }
}
} // namespace

class TestAsync : public QObject
{
    Q_OBJECT
private slots:
    void oneWorkerEqualsSyncBitForBit_data()
    {
        QTest::addColumn<int>("apply");
        QTest::addColumn<bool>("blas");
        for (const bool blas : {false, true}) {
            // The BLAS model's products go through the GEMM library, as on the real presets.
            const char* model = blas ? "BLAS-model" : "small-model";
            QTest::addRow("%s-lock", model) << static_cast<int>(AsyncApply::Lock) << blas;
            QTest::addRow("%s-lockfree", model) << static_cast<int>(AsyncApply::LockFree) << blas;
        }
    }

    void oneWorkerEqualsSyncBitForBit()
    {
        QFETCH(int, apply);
        QFETCH(bool, blas);
        const auto problem = blas ? blobsProblem(1024, Activation::Relu, {8, 192, 128, 10}) : blobsProblem();
        TrainerSettings s;
        s.batch = blas ? 96 : 48;
        s.chunk = blas ? 32 : 8;
        s.accum = 2;
        s.learningRate = 0.05;
        s.momentum = 0.9;
        s.sampleBudget = 30 * s.batch;
        s.asyncApply = static_cast<AsyncApply>(apply);
        ThreadsSyncTrainer sync(problem, s);
        ThreadsAsyncTrainer async(problem, s);
        PushLog log;
        TrainingObserver none;
        sync.run(RunLimits {}, none);
        async.run(RunLimits {}, log);
        QCOMPARE(async.updates(), std::int64_t(30));
        QCOMPARE(async.samples(), sync.samples());
        QVERIFY(sameBits(async.parameters(), sync.parameters()));
        for (const auto& p : log.pushes)
            QCOMPARE(p.staleness, std::int64_t(0));
        QCOMPARE(async.metrics().staleness().max(), std::int64_t(0));
    }

    void stalenessFollowsTheVersionCounter_data()
    {
        QTest::addColumn<int>("workers");
        QTest::addColumn<int>("apply");
        for (const int p : {2, 3, 4}) {
            QTest::addRow("P%d-lock", p) << p << static_cast<int>(AsyncApply::Lock);
            QTest::addRow("P%d-lockfree", p) << p << static_cast<int>(AsyncApply::LockFree);
        }
    }

    void stalenessFollowsTheVersionCounter()
    {
        QFETCH(int, workers);
        QFETCH(int, apply);
        const auto problem = mediumProblem();
        TrainerSettings s;
        s.workers = workers;
        s.batch = 128 * workers;
        s.learningRate = 0.02;
        s.sampleBudget = static_cast<std::int64_t>(60) * s.batch;
        s.asyncApply = static_cast<AsyncApply>(apply);
        ThreadsAsyncTrainer trainer(problem, s);
        trainer.setSliceSeconds(0.05); // several slices
        PushLog log;
        const TakenByTheOs taken;
        trainer.run(RunLimits {}, log);
        const double osSeconds = taken.seconds();
        QCOMPARE(trainer.samples(), s.sampleBudget);
        QCOMPARE(static_cast<std::int64_t>(log.pushes.size()), 60 * workers);

        std::map<int, std::int64_t> lastApplied; // per worker: index of its previous push
        for (std::size_t i = 0; i < log.pushes.size(); ++i) {
            const auto& p = log.pushes[i];
            QVERIFY(p.staleness >= 0);
            const std::int64_t read = p.index - p.staleness; // the version it read
            QVERIFY(read >= 0);
            // A worker reads after its own previous push was applied.
            if (lastApplied.count(p.worker))
                QVERIFY2(read >= lastApplied[p.worker] + 1, "a worker read a version older than its own last push");
            lastApplied[p.worker] = p.index;
        }
        // P equal workers progressing together: each sees the others' pushes between its read and its apply, about
        // P - 1. That premise is measured in the log: where one worker pushed many times in a row, the others were
        // kept from their CPUs meanwhile (a machine busy with other work), their next pushes are stale by all of those
        // and its own by none, so the mean can be anything (seen under bursty load: 0.4 with 2 workers); said, not
        // checked.
        int longestRun = 0;
        for (std::size_t i = 0, run = 0; i < log.pushes.size(); ++i) {
            run = i > 0 && log.pushes[i].worker == log.pushes[i - 1].worker ? run + 1 : 1;
            longestRun = std::max(longestRun, static_cast<int>(run));
        }
        const double mean = trainer.metrics().staleness().mean();
        if (longestRun <= kEvenRun) {
            QVERIFY2(mean > 0.4 * (workers - 1) && mean < 1.6 * (workers - 1),
                qPrintable(QStringLiteral("mean staleness %1 with %2 workers (at most %3 pushes in a row by one)")
                               .arg(mean)
                               .arg(workers)
                               .arg(longestRun)));
        } else {
            qInfo(
                "one worker pushed %d times in a row (the others were kept from their CPUs): mean staleness %.2f with "
                "%d workers not checked",
                longestRun, mean, workers);
        }
        checkAccounting(trainer, osSeconds);
    }

    void syncWaitsForAStraggler()
    {
        const auto problem = mediumProblem();
        // Batches of 2,048: the straggler's step (about 6 ms) is long against the team's start, barrier and
        // join, each a futex wake-up of 50 to 200 us here (OMP_WAIT_POLICY=passive), which the straggler
        // waits through too. With batches of 512 those wake-ups were 0.21 of its time.
        ThreadsSyncTrainer trainer(problem, twoWorkersOneStraggler(30, 2048));
        TrainingObserver none;
        const TakenByTheOs taken;
        trainer.run(RunLimits {}, none);
        const double osSeconds = taken.seconds();
        const auto& w = trainer.metrics().workers();
        const double slowIdle = w[0].idleFraction();
        const double fastIdle = w[1].idleFraction();
        const auto figures = [&](const char* who, const WorkerFigures& f) {
            return QStringLiteral("%1 worker idle %2 (wall %3 s: compute %4, delay %5, barrier %6, apply %7; "
                                  "the OS kept a thread waiting %8 s)")
                .arg(QString::fromLatin1(who))
                .arg(f.idleFraction())
                .arg(f.wallSeconds)
                .arg(f.of(SpanKind::Compute))
                .arg(f.of(SpanKind::Delay))
                .arg(f.of(SpanKind::WaitBarrier))
                .arg(f.apply())
                .arg(osSeconds);
        };
        // Worker 1 waits 3 of every 4 units of worker 0's time: 0.75 ideally, where the OS left the team alone
        // (it took under 2% of the wall from any thread). On a busy machine a preempted worker's lost time
        // slices (milliseconds) land in either worker's spans, the team's start and join take time slices
        // too, and the straggler's delay is 3x its own compute however long that took: there, only that the
        // fast worker waits more; and nothing where the OS took more than a quarter of the wall.
        const double takenShare = osSeconds / w[0].wallSeconds;
        const QString both = figures("fast", w[1]) + QStringLiteral("; ") + figures("slow", w[0]);
        if (takenShare < 0.02) {
            QVERIFY2(fastIdle > 0.55 && fastIdle < 0.9, qPrintable(both));
            QVERIFY2(slowIdle < 0.2, qPrintable(both));
        } else if (takenShare < 0.25) {
            QVERIFY2(fastIdle > slowIdle + 0.3, qPrintable(both));
        } else {
            qInfo("a very busy machine: idle fractions not checked (%s)", qPrintable(both));
        }
        checkAccounting(trainer, osSeconds);
    }

    void asyncDoesNotWaitForAStraggler()
    {
        const auto problem = mediumProblem();
        ThreadsAsyncTrainer trainer(problem, twoWorkersOneStraggler(100));
        PushLog log;
        const TakenByTheOs taken;
        trainer.run(RunLimits {}, log);
        const double osSeconds = taken.seconds();
        // The fast worker does not wait for the straggler: it goes on pushing (the sample budget is shared)
        // and is idle only for the lock and the slice's ends.
        // (On a busy machine it waits for a preempted lock holder and, at the budget's end, for the straggler's
        // last push, slower still: checked where the OS took under 2% of the wall from the threads.)
        const bool quiet = osSeconds < 0.02 * trainer.metrics().wallSeconds();
        const double fastIdle = trainer.metrics().workers()[1].idleFraction();
        if (quiet)
            QVERIFY2(fastIdle < 0.25, qPrintable(QStringLiteral("fast worker idle %1").arg(fastIdle)));
        // So it pushes more often: about 4 times on a quiet machine. On a busy one about twice: the
        // straggler sleeps 3x its own compute and so leaves its CPU share to the fast worker's rivals.
        int fast = 0, slow = 0;
        for (const auto& push : log.pushes)
            (push.worker == 0 ? slow : fast) += 1;
        QVERIFY2(quiet ? fast > 2 * slow : 2 * fast > 3 * slow,
            qPrintable(QStringLiteral("fast %1, slow %2 pushes (the OS kept a thread waiting %3 s)")
                           .arg(fast)
                           .arg(slow)
                           .arg(osSeconds)));
        // The slow worker's gradients are stale by the fast worker's pushes in between, the fast worker's by
        // the few of the straggler's (about 4 against 1/4 on a quiet machine).
        const auto& perWorker = trainer.metrics().staleness().perWorker();
        const double slowStaleness = perWorker[0].mean();
        const double fastStaleness = perWorker[1].mean();
        QVERIFY2(slowStaleness > (quiet ? 2.0 : 1.0) && slowStaleness > 2.0 * fastStaleness,
            qPrintable(
                QStringLiteral("mean staleness: slow worker %1, fast worker %2 (the OS kept a thread waiting %3 s)")
                    .arg(slowStaleness)
                    .arg(fastStaleness)
                    .arg(osSeconds)));
        checkAccounting(trainer, osSeconds);
    }

    // SSP in this process (ThreadSanitizer sees its clocks and waits): with a 4x straggler and a bound of S, a
    // push's worker is at most S + 1 pushes ahead of the slowest when it is applied (it started with at most S),
    // the bound binds, and the fast worker's waits are named after the straggler.
    void sspKeepsItsBound_data()
    {
        QTest::addColumn<int>("bound");
        QTest::addRow("S = 0") << 0;
        QTest::addRow("S = 2") << 2;
    }
    void sspKeepsItsBound()
    {
        QFETCH(int, bound);
        const auto problem = mediumProblem();
        TrainerSettings s = twoWorkersOneStraggler(40);
        s.sspBound = bound;
        ThreadsAsyncTrainer trainer(problem, s, Mode::Ssp);
        PushLog log;
        trainer.run(RunLimits {}, log);
        std::int64_t applied[2] = {0, 0};
        std::int64_t largest = 0;
        for (const auto& push : log.pushes) {
            ++applied[push.worker];
            largest = std::max(largest, applied[push.worker] - std::min(applied[0], applied[1]));
        }
        QCOMPARE(largest, static_cast<std::int64_t>(bound + 1));
        const auto& workers = trainer.metrics().workers();
        QVERIFY2(workers[0].madeOthersWait > 0.5 * workers[1].of(SpanKind::WaitBarrier),
            qPrintable(QStringLiteral("the fast worker waited %1 s for the bound, %2 s of it named after the straggler")
                           .arg(workers[1].of(SpanKind::WaitBarrier))
                           .arg(workers[0].madeOthersWait)));
    }

    void asyncConvergesOnTheParabola_data()
    {
        QTest::addColumn<QString>("apply");
        QTest::addRow("lock") << QStringLiteral("lock");
        QTest::addRow("lockfree") << QStringLiteral("lockfree");
        QTest::addRow("staleness-lr") << QStringLiteral("lock");
    }

    void asyncConvergesOnTheParabola()
    {
        QFETCH(QString, apply);
        ConfigBuilder b;
        b.applyPreset("parabola", "test");
        b.applyOption("workers", "4");
        b.applyOption("async-apply", apply.toStdString());
        if (QByteArray(QTest::currentDataTag()) == "staleness-lr")
            b.applyOption("async-lr", "staleness");
        const PreparedRun run = prepareRun(b.resolve());
        TrainingObserver none;
        const ModeResult result = runMode(run, Mode::Async, none);
        QCOMPARE(result.samples, std::int64_t(2000 * 50)); // the same sample budget as sync
        QVERIFY2(
            result.final.trainLoss < 0.05, qPrintable(QStringLiteral("final loss %1").arg(result.final.trainLoss)));
    }

    void divergenceStopsAsyncInOrder_data() { addApplyModes(); }

    void divergenceStopsAsyncInOrder()
    {
        QFETCH(int, apply);
        const auto problem = parabolaProblem();
        TrainerSettings s;
        s.workers = 2;
        s.batch = 50;
        s.learningRate = 1e5;
        s.asyncApply = static_cast<AsyncApply>(apply);
        s.sampleBudget = 2000 * 50;
        ThreadsAsyncTrainer trainer(problem, s);
        PushLog log;
        trainer.run(RunLimits {}, log);
        QVERIFY(trainer.diverged());
        QVERIFY(trainer.divergedAt() >= 0);
        QVERIFY(trainer.samples() < s.sampleBudget);
        QVERIFY(!log.pushes.empty());
        QVERIFY(!std::isfinite(log.pushes.back().loss)); // the record of the non-finite push is kept
        QVERIFY(trainer.finished());
        const std::int64_t updates = trainer.updates();
        trainer.run(RunLimits {}, log);
        QCOMPARE(trainer.updates(), updates); // stays stopped
    }

    void timelineIsValidTraceEventJson()
    {
        const auto problem = mediumProblem();
        TrainerSettings s;
        s.workers = 3;
        s.batch = 384;
        s.chunk = 64;
        s.learningRate = 0.02;
        s.sampleBudget = 10 * 384;
        s.stragglers = {{2, 2.0}};
        RunRecorder syncRecorder(1000, 100000), asyncRecorder(1000, 100000);
        ThreadsSyncTrainer sync(problem, s);
        sync.run(RunLimits {}, syncRecorder);
        ThreadsAsyncTrainer async(problem, s);
        async.run(RunLimits {}, asyncRecorder);
        const Json trace = parseJson(traceJson({{Mode::Sync, &syncRecorder}, {Mode::Async, &asyncRecorder}}), "trace");
        QVERIFY(trace.at("traceEvents").is_array());
        std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> rows;
        std::map<int, int> threadNames;
        for (const Json& e : trace.at("traceEvents")) {
            const std::string ph = e.at("ph").get<std::string>();
            const int pid = static_cast<int>(e.at("pid").get<double>());
            const int tid = static_cast<int>(e.at("tid").get<double>());
            if (ph == "M") {
                if (e.at("name").get<std::string>() == "thread_name")
                    ++threadNames[pid];
                continue;
            }
            QCOMPARE(ph, std::string("X"));
            QVERIFY(e.at("name").is_string());
            const double ts = e.at("ts").get<double>();
            const double dur = e.at("dur").get<double>();
            QVERIFY(dur > 0);
            rows[{pid, tid}].emplace_back(ts, ts + dur);
        }
        QCOMPARE(threadNames[1], 3); // one row per worker and mode
        QCOMPARE(threadNames[2], 3);
        QCOMPARE(rows.size(), std::size_t(6));
        for (auto& [row, spans] : rows) {
            std::sort(spans.begin(), spans.end());
            for (std::size_t i = 1; i < spans.size(); ++i) {
                // Timestamps are rounded to 1 ns (microseconds with 3 decimals).
                QVERIFY2(spans[i].first >= spans[i - 1].second - 0.0015,
                    qPrintable(QStringLiteral("overlap in pid %1 tid %2").arg(row.first).arg(row.second)));
            }
        }
    }

    // Async at one worker waits for nobody: its measured idle time (lock, slice ends) is below 2%.
    void oneWorkerWaitsForNobody()
    {
        const auto problem = mediumProblem();
        TrainerSettings s;
        s.workers = 1;
        s.batch = 256;
        s.learningRate = 0.02;
        s.sampleBudget = 40 * 256;
        ThreadsAsyncTrainer trainer(problem, s);
        trainer.setSliceSeconds(0.05);
        TrainingObserver none;
        const TakenByTheOs taken;
        trainer.run(RunLimits {}, none);
        const double osSeconds = taken.seconds();
        const WorkerFigures& w = trainer.metrics().workers().front();
        QVERIFY2(w.idleFraction() < 0.02, qPrintable(QStringLiteral("idle %1").arg(w.idleFraction())));
        checkAccounting(trainer, osSeconds);
    }

    // A straggler's sleep ends early when the run is asked to stop, so that a large factor does not hold
    // up a stop (headless: a signal).
    void stragglerSleepIsInterruptible()
    {
        std::atomic<bool> stop {false};
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            stop = true;
        });
        QElapsedTimer t;
        t.start();
        const bool completed = sleepForStraggler(10.0, stop);
        stopper.join();
        QVERIFY(!completed);
        QVERIFY2(t.elapsed() < 1000, qPrintable(QStringLiteral("slept %1 ms").arg(t.elapsed())));
        QElapsedTimer full;
        full.start();
        QVERIFY(sleepForStraggler(0.03, std::atomic<bool> {false}));
        QVERIFY(full.nsecsElapsed() >= 30'000'000); // never ends early
    }

    void boundedMemoryThinsOldPoints()
    {
        RunRecorder recorder(64);
        UpdateEvent u;
        for (int i = 0; i < 100000; ++i) {
            u.index = i;
            u.batchLoss = 1.0 / (1 + i);
            recorder.onUpdate(u, UpdateFigures {});
        }
        QVERIFY(recorder.updates().size() < 64);
        QVERIFY(recorder.updates().size() >= 32);
        QCOMPARE(recorder.updates().front().index, std::int64_t(0));
        // Evenly thinned: consecutive kept points are one stride apart.
        for (std::size_t i = 1; i < recorder.updates().size(); ++i)
            QCOMPARE(recorder.updates()[i].index - recorder.updates()[i - 1].index, recorder.stride());
    }

    void liveReconfigurationCarriesOn()
    {
        const auto problem = blobsProblem(2000);
        for (const Mode mode : {Mode::Sync, Mode::Async}) {
            TrainerSettings s;
            s.workers = 2;
            s.batch = 64;
            s.learningRate = 0.05;
            auto trainer = makeTrainer(EngineKind::Threads, mode, problem, s);
            PushLog log;
            trainer->run(RunLimits {20, std::numeric_limits<double>::infinity()}, log);
            const std::int64_t before = trainer->samples();
            s.workers = 4;
            s.batch = 96;
            s.accum = 3;
            s.chunk = 8; // 12 chunks: every worker has some (a model this small is one chunk by default)
            s.learningRate = 0.01;
            s.stragglers = {{3, 2.0}};
            trainer->reconfigure(s);
            // A quarter of a second, not a number of pushes: async's 2,000 tiny pushes took a few milliseconds,
            // over before a busy machine had given the fourth thread a time slice.
            trainer->run(RunLimits {std::numeric_limits<std::int64_t>::max(), 0.25}, log);
            QVERIFY(trainer->samples() > before);
            QCOMPARE(trainer->metrics().workers().size(), std::size_t(4));
            QVERIFY2(trainer->metrics().workers()[3].updates > 0, modeName(mode));
            s.workers = 0;
            QVERIFY_THROWS_EXCEPTION(SgdError, trainer->reconfigure(s));
        }
    }
};

QTEST_GUILESS_MAIN(TestAsync)
#include "test_async.moc"
