// The team-wide modes' wires on the simulated cluster (--topology ps | tree | allreduce): the same bits on every
// topology, each topology's virtual time per update against its analytic cost on the datacenter cluster, backup with
// B = 0 at sync's time on the wires they share, and backup refused where it cannot run.
#include "AppRuns.h"
#include "core/common/Json.h"

#include <QTest>

#include <cmath>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// The datacenter cluster's figures (README, --help): 20 us host to host through one switch, 10 Gb/s links.
constexpr double datacenterLatency = 20e-6;
constexpr double datacenterBandwidth = 10e9 / 8;
// Virtual time is exact arithmetic on the model's figures: the simulation and the formula agree to rounding.
constexpr double analyticTolerance = 1e-6; // relative

double at(const Json& run, const char* section, const char* key)
{
    return run.at(section).at(key).get<double>();
}
} // namespace

class TestSimTopologies : public RunFolderTest
{
    Q_OBJECT

private slots:
    // Each worker of P computes its 4096 / P samples (chunks of 16, so every worker has work), then:
    //  - ps: every gradient goes to the server at once, sharing its link (latency + P n / W), the server adds P - 1
    //    gradients and applies, and every worker takes the parameters back the same way;
    //  - tree: log2 P levels up, each a message (latency + n / W) and an addition, the root's apply, log2 P levels
    //    down (a binomial broadcast);
    //  - allreduce: P - 1 steps of a reduce-scatter (latency + ceil(n / P) / W each, then 1/P of an addition), 1/P of
    //  the
    //    apply, P - 1 steps of an all-gather.
    // n is the parameters' bytes, W the link's bandwidth; additions and applies at the host's speed.
    void virtualTimeIsTheAnalyticCost_data()
    {
        QTest::addColumn<int>("workers");
        QTest::addColumn<QString>("topology");
        for (const int p : {16, 64, 256}) {
            for (const char* t : {"ps", "tree", "allreduce"})
                QTest::addRow("%s P%d", t, p) << p << QString::fromLatin1(t);
        }
    }

    void virtualTimeIsTheAnalyticCost()
    {
        QFETCH(int, workers);
        QFETCH(QString, topology);
        const Run r = runApp(nextOut(),
            words("--preset fashion-mnist --samples 8192 --engine sim --cluster datacenter --batch 4096 --chunk 16 "
                  "--steps 4 --mode sync --eval-every 0 --workers")
                + QStringList {QString::number(workers), QStringLiteral("--topology"), topology});
        QCOMPARE(r.exitCode, 0);
        const Json& run = firstRun(r);
        QCOMPARE(run.at("topology").get<std::string>(), topology.toStdString());
        const double hostFlops = run.at("host_flops").get<double>();
        const double bytes = at(run, "cost_model", "message_bytes");
        const double add = at(run, "cost_model", "tree_addition_flops") / hostFlops;
        const double apply = at(run, "cost_model", "apply_flops") / hostFlops;
        const int samples = 4096 / workers;
        const double compute
            = (samples * at(run, "cost_model", "flops_per_sample") + (samples / 16 - 1) * add * hostFlops) / hostFlops;
        const double p = workers;
        double expected = 0.0;
        if (topology == QStringLiteral("ps")) {
            expected = compute + 2 * (datacenterLatency + p * bytes / datacenterBandwidth) + (p - 1) * add + apply;
        } else if (topology == QStringLiteral("tree")) {
            const double levels = std::log2(p);
            const double message = datacenterLatency + bytes / datacenterBandwidth;
            expected = compute + levels * (message + add) + apply + levels * message;
        } else {
            const double step = datacenterLatency + std::ceil(bytes / p) / datacenterBandwidth; // whole bytes a segment
            expected = compute + 2 * (p - 1) * step + (p - 1) * add / p + apply / p;
        }
        const double simulated = run.at("seconds").get<double>() / run.at("updates").get<double>();
        QVERIFY2(std::abs(simulated / expected - 1) < analyticTolerance,
            qPrintable(QStringLiteral("%1 P = %2: %3 ms per update simulated, %4 ms analytic")
                           .arg(topology)
                           .arg(workers)
                           .arg(simulated * 1e3)
                           .arg(expected * 1e3)));
    }

    // The topology decides time, never bits: sync and local-sgd give the same digest on all three; backup with
    // B = 0 gives sync's digest and sync's virtual time on the wires they share (a parameter server), with
    // stragglers and jitter.
    void topologiesShareBitsAndBackupZeroIsSync()
    {
        const QStringList common = words("--preset fashion-mnist --samples 4096 --engine sim --cluster datacenter "
                                         "--workers 16 --slow-fraction 0.1:4 --jitter 0.2 --steps 12");
        QString digests[2];
        for (const char* t : {"ps", "tree", "allreduce"}) {
            const Run r = runApp(
                nextOut(), common + words("--mode sync,local-sgd --topology") + QStringList {QString::fromLatin1(t)});
            QCOMPARE(r.exitCode, 0);
            for (int m = 0; m < 2; ++m) {
                const QString d = QString::fromStdString(
                    r.summary.at("runs").at(std::size_t(m)).at("params_digest").get<std::string>());
                if (digests[m].isEmpty())
                    digests[m] = d;
                QCOMPARE(d, digests[m]);
            }
        }
        const Run both = runApp(nextOut(), common + words("--mode sync,backup --backup-workers 0"));
        QCOMPARE(both.exitCode, 0);
        const Json& sync = both.summary.at("runs").at(0);
        const Json& backup = both.summary.at("runs").at(1);
        QCOMPARE(sync.at("topology").get<std::string>(), std::string("ps"));
        QCOMPARE(backup.at("params_digest").get<std::string>(), sync.at("params_digest").get<std::string>());
        const double syncSeconds = sync.at("seconds").get<double>();
        QVERIFY(syncSeconds > 0);
        QVERIFY2(std::abs(backup.at("seconds").get<double>() / syncSeconds - 1) < 0.02,
            qPrintable(
                QStringLiteral("backup %1 s, sync %2 s").arg(backup.at("seconds").get<double>()).arg(syncSeconds)));
    }

    void backupIsRefusedWhereItCannotRun_data()
    {
        QTest::addColumn<QString>("topology");
        QTest::addRow("tree") << QStringLiteral("tree");
        QTest::addRow("allreduce") << QStringLiteral("allreduce");
    }

    void backupIsRefusedWhereItCannotRun()
    {
        QFETCH(QString, topology);
        const QString out = nextOut();
        const Run r = runApp(out,
            words("--preset blobs --engine sim --workers 4 --steps 3 --mode sync,backup --topology")
                + QStringList {topology});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.stderrText.contains(QStringLiteral("--topology: backup cannot run on ") + topology),
            qPrintable(r.stderrText));
        QVERIFY(r.stderrText.contains(QStringLiteral("only a parameter server sees")));
        QVERIFY(r.summary.is_null());
    }

    void topologyIsRefusedWhereItMeansNothing()
    {
        const Run threads
            = runApp(nextOut(), words("--preset blobs --workers 2 --steps 3 --mode sync --topology tree"));
        QCOMPARE(threads.exitCode, 2);
        QVERIFY2(threads.stderrText.contains(QStringLiteral("--topology: applies to the simulated cluster and MPI")),
            qPrintable(threads.stderrText));
        const Run pushing = runApp(
            nextOut(), words("--preset blobs --engine sim --workers 2 --steps 3 --mode async --topology tree"));
        QCOMPARE(pushing.exitCode, 2);
        QVERIFY2(pushing.stderrText.contains(QStringLiteral("applies to the team-wide modes")),
            qPrintable(pushing.stderrText));
    }
};

QTEST_GUILESS_MAIN(TestSimTopologies)
#include "test_sim_topologies.moc"
