// The simulated cluster's textbook figures on the ideal cluster (--cluster ideal): sync's wait for a straggler,
// async's staleness with equal workers and with a straggler, and the time of a push as the cost model says. Each run
// is its own process: SimGrid allows one simulated platform per process.
#include "SimPlatforms.h"
#include "core/common/Json.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// The ideal cluster is the textbook model: with one worker 4x slower, the others wait 3 of every 4 units of
// its time. What is not waiting is the combine and apply (a few hundred thousand flops against the 30 million
// of a worker's compute here): that leaves the fraction within this of 0.75.
constexpr double kIdealIdleTolerance = 0.005;
// P equal workers on the ideal cluster each see the other P - 1 pushes between a read and its apply, but in
// the first round of a run (all start together: 0, 1, ..., P - 1, about (P - 1) / 2 on average).
constexpr double kIdealStalenessTolerance = 0.02;
// In virtual time the spans of a worker tile its wall time: what is left is the rounding of sums of doubles.
constexpr double kVirtualRounding = 1e-9;
} // namespace

class TestSimIdeal : public RunFolderTest
{
    Q_OBJECT

private slots:
    void idealSyncWaitsThreeQuartersForAFourTimesSlowerWorker()
    {
        const Run r = runApp(nextOut(),
            words("--preset blobs --mode sync --workers 4 --slow 1:4 --steps 40 --engine sim --cluster ideal"));
        QCOMPARE(r.exitCode, 0);
        const Json& workers = firstRun(r).at("workers_detail");
        for (const Json& w : workers) {
            const double idle = w.at("idle_fraction").get<double>();
            if (w.at("worker").get<int>() == 1)
                QVERIFY2(idle < kIdealIdleTolerance, qPrintable(QStringLiteral("the straggler idles %1").arg(idle)));
            else
                QVERIFY2(std::fabs(idle - 0.75) <= kIdealIdleTolerance,
                    qPrintable(QStringLiteral("worker %1 idles %2").arg(w.at("worker").get<int>()).arg(idle)));
        }
    }

    // The exact counterparts of test_mpi_sync's attribution and test_mpi_async's accounting, in virtual time where
    // no other program can take a core: with one worker 8x slower on the binomial tree (the MPI engine's sync wires),
    // the straggler waits at the barrier for nobody (at most the combine below it), the others wait 7 of its 8 units,
    // every such wait is named after the straggler, and each worker's spans tile its wall time (nothing unaccounted).
    // Rank 0 as the straggler too: it is the tree's root, where the others' waits end.
    void idealSyncWaitsAreAttributedExactly_data()
    {
        QTest::addColumn<int>("straggler");
        QTest::addRow("worker-0") << 0;
        QTest::addRow("worker-1") << 1;
    }
    void idealSyncWaitsAreAttributedExactly()
    {
        QFETCH(int, straggler);
        const Run r = runApp(nextOut(),
            words("--preset blobs --mode sync --workers 3 --steps 40 --engine sim --cluster ideal --topology tree")
                + QStringList {QStringLiteral("--slow"), QStringLiteral("%1:8").arg(straggler)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& workers = firstRun(r).at("workers_detail");
        double othersWaited = 0.0;
        for (const Json& w : workers) {
            const int worker = w.at("worker").get<int>();
            const double wall = w.at("wall_seconds").get<double>();
            const double barrier = w.at("wait_seconds").at("barrier").get<double>();
            QVERIFY2(std::fabs(w.at("unaccounted_seconds").get<double>()) <= kVirtualRounding * wall,
                qPrintable(QString::fromStdString(dumpJson(w, -1))));
            if (worker == straggler) {
                QVERIFY2(barrier <= kIdealIdleTolerance * wall,
                    qPrintable(
                        QStringLiteral("the straggler waited %1 of its time at the barrier").arg(barrier / wall)));
            } else {
                QVERIFY2(barrier >= (7.0 / 8 - kIdealIdleTolerance) * wall,
                    qPrintable(QStringLiteral("worker %1 waited %2 of its time").arg(worker).arg(barrier / wall)));
                othersWaited += barrier;
                QVERIFY(w.at("made_others_wait_seconds").get<double>() <= kVirtualRounding * wall);
            }
        }
        const double made
            = workers.at(static_cast<std::size_t>(straggler)).at("made_others_wait_seconds").get<double>();
        QVERIFY2(std::fabs(made - othersWaited) <= kVirtualRounding * othersWaited,
            qPrintable(
                QStringLiteral("the straggler made others wait %1 s of their %2 s").arg(made).arg(othersWaited)));
    }

    // Async across a parameter server and 3 workers in virtual time: every worker's spans (compute, read, slice)
    // tile its wall time, most of it computing (test_mpi_async checks the same on real processes, up to what the
    // operating system takes from them).
    void idealAsyncAccountsForEveryWorkersTime()
    {
        const Run r = runApp(
            nextOut(), words("--preset blobs --mode async --workers 3 --steps 200 --engine sim --cluster ideal"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& run = firstRun(r);
        for (const Json& w : run.at("workers_detail")) {
            const double wall = w.at("wall_seconds").get<double>();
            QVERIFY(wall > 0);
            QVERIFY2(std::fabs(w.at("unaccounted_seconds").get<double>()) <= kVirtualRounding * wall,
                qPrintable(QString::fromStdString(dumpJson(w, -1))));
            QVERIFY(w.at("compute_seconds").get<double>() > 0.5 * wall);
        }
    }

    // What this checks is bookkeeping, not the timing model: by Little's law the mean staleness of P workers that
    // always have one push in flight is P - 1 whatever their speeds, so any timing passes. It pins that staleness
    // counts the updates applied between a push's read and its apply. The timing is checked by the per-worker
    // test below, by the spans on platforms, and by the push rate on the ideal cluster.
    void idealAsyncStalenessIsWorkersMinusOne_data()
    {
        QTest::addColumn<int>("workers");
        QTest::addRow("P8") << 8;
        QTest::addRow("P64") << 64;
    }

    void idealAsyncStalenessIsWorkersMinusOne()
    {
        QFETCH(int, workers);
        const Run r = runApp(nextOut(),
            words("--preset blobs --mode async --batch 512 --lr 0.001 --steps 60 --engine sim --cluster ideal")
                + QStringList {QStringLiteral("--workers"), QString::number(workers)});
        QCOMPARE(r.exitCode, 0);
        const double mean = firstRun(r).at("staleness").at("mean").get<double>();
        QVERIFY2(std::fabs(mean - (workers - 1)) <= kIdealStalenessTolerance * (workers - 1),
            qPrintable(QStringLiteral("mean staleness %1 with %2 workers").arg(mean).arg(workers)));
    }

    // The mean staleness is P - 1 whatever the speeds (each push is stale by the pushes of the others in
    // flight); a straggler shows in who is stale by how much. P = 8, worker 0 four times slower: in its 4 units
    // the 7 others push 28 times; in a fast worker's unit the 6 other fast ones push 6 times and the slow one a
    // quarter of a time: 6.25.
    // The same whether worker 0 is a straggler (--slow) or sits on a host four times slower than the others.
    void idealAsyncStragglerIsStaleByTheOthersPushes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addRow("4x straggler") << words("--cluster ideal --slow 0:4");
        QStringList hosts {QStringLiteral("id=\"h0\" speed=\"0.5Gf\"")};
        for (int h = 1; h <= 8; ++h)
            hosts << QStringLiteral("id=\"h%1\" speed=\"2Gf\"").arg(h);
        // Links that take no measurable time: the model's figure is the ideal cluster's.
        QTest::addRow("host at a quarter speed") << QStringList {QStringLiteral("--platform"),
            writePlatform(m_dir, QStringLiteral("quarter.xml"), hosts,
                QStringLiteral("bandwidth=\"1e15Bps\" latency=\"0s\" sharing_policy=\"FATPIPE\""))};
    }

    void idealAsyncStragglerIsStaleByTheOthersPushes()
    {
        QFETCH(QStringList, args);
        const Run r = runApp(nextOut(),
            words("--preset blobs --mode async --batch 512 --lr 0.001 --steps 120 --engine sim --workers 8") + args);
        QCOMPARE(r.exitCode, 0);
        const auto& workers = firstRun(r).at("workers_detail");
        const double slow = workers.at(0).at("mean_staleness").get<double>();
        // Its first push (read at the start, when nobody had pushed yet) makes it a little lower.
        QVERIFY2(
            std::fabs(slow - 28.0) <= 0.05 * 28.0, qPrintable(QStringLiteral("slow worker's staleness %1").arg(slow)));
        for (std::size_t w = 1; w < 8; ++w) {
            const double fast = workers.at(w).at("mean_staleness").get<double>();
            QVERIFY2(std::fabs(fast - 6.25) <= kIdealStalenessTolerance * 6.25,
                qPrintable(QStringLiteral("worker %1's staleness %2").arg(w).arg(fast)));
        }
    }

    // The cost model of a convolutional network: LeNet-5's multiply-adds, layer by layer (a convolution's output values
    // x its taps, a dense layer's inputs x outputs), 2 flops each forward, for the weight gradients, and for the input
    // gradients above the first convolution; its messages are its 61,706 parameters. On the ideal cluster one worker
    // computes that work and the chunk tree's additions at the host's speed.
    void costModelCountsConvolutions()
    {
        const Run r = runApp(nextOut(),
            words("--preset fashion-cnn --mode sync --samples 512 --batch 256 --steps 2 --engine sim --cluster ideal "
                  "--workers 1"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& run = firstRun(r);
        const double conv1 = 28.0 * 28 * 6 * (1 * 5 * 5);
        const double conv2 = 10.0 * 10 * 16 * (6 * 5 * 5);
        const double dense = 400.0 * 120 + 120 * 84 + 84 * 10;
        const double flops = 2 * (conv1 + conv2 + dense) * 2 + 2 * (conv2 + dense);
        QCOMPARE(run.at("cost_model").at("flops_per_sample").get<double>(), flops);
        QCOMPARE(run.at("cost_model").at("message_bytes").get<double>(), 61706.0 * 4);
        // and the tree's additions: 2 updates of 32 chunks of 8 samples, 31 additions of the gradient each
        const double speed = run.at("host_flops").get<double>();
        const double computed = run.at("all_workers").at("compute_seconds").get<double>();
        QVERIFY2(std::fabs(computed / ((512 * flops + 2 * 31 * 61706.0) / speed) - 1.0) <= 1e-9,
            qPrintable(QStringLiteral("%1 s of compute for 512 samples").arg(computed)));
    }

    // Time as fine as the model: the parabola's update is under a nanosecond of work (SimGrid's sleeps round to
    // 1 ns; its executions do not). One worker on the ideal cluster pushes every compute + apply; eight equal
    // workers (6 samples each) keep the server under its load, so each of them pushes every compute + apply
    // too, and the cluster eight times as often (the first round's queue aside).
    void idealPushTimeIsTheModelsFigure_data()
    {
        QTest::addColumn<int>("workers");
        QTest::addRow("P1") << 1;
        QTest::addRow("P8") << 8;
    }

    void idealPushTimeIsTheModelsFigure()
    {
        QFETCH(int, workers);
        const Run r = runApp(nextOut(),
            words("--preset parabola --mode async --batch 48 --momentum 0 --steps 4000 --engine sim --cluster ideal")
                + QStringList {QStringLiteral("--workers"), QString::number(workers)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& run = firstRun(r);
        const double speed = run.at("host_flops").get<double>();
        const double pushes = run.at("updates").get<double>();
        const double compute = 48.0 / workers * run.at("cost_model").at("flops_per_sample").get<double>() / speed;
        const double apply = run.at("cost_model").at("apply_flops").get<double>() / speed;
        const QString why = computedAtSpeed(run, speed);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        const double computed = run.at("all_workers").at("compute_seconds").get<double>() / pushes;
        QVERIFY2(computed >= compute, "less compute than the samples'");
        const double perPush = run.at("seconds").get<double>() / pushes;
        const double model = (computed + apply) / workers;
        QVERIFY2(std::fabs(perPush / model - 1.0) <= 2e-3,
            qPrintable(QStringLiteral("%1 s a push, the model says %2 s").arg(perPush).arg(model)));
        for (const Json& w : run.at("workers_detail"))
            QVERIFY2(w.at("unaccounted_seconds").get<double>() >= 0, "negative unaccounted time");
    }
};

QTEST_GUILESS_MAIN(TestSimIdeal)
#include "test_sim_ideal.moc"
