// Hosts and links of the simulated cluster: compute is work at a host's speed (declared, by pstate or by an
// availability profile), messages cross links at their bandwidth (and the built-in clusters' network model times them
// as SimGrid does), workers share a multi-core host, and long work ends when the model says. Each run is its own
// process: SimGrid allows one simulated platform per process.
#include "SimPlatforms.h"
#include "core/common/Json.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace sgdscope;
using namespace sgdscope::testing;

class TestSimPlatforms : public RunFolderTest
{
    Q_OBJECT

private slots:
    // The built-in clusters' messages are timed by StarNetwork (processor sharing on the one link a message shares)
    // instead of SimGrid's max-min solver; on these runs both must give the same times. A message of the wider
    // parabola is 264 kB, 211 us alone on a 10 Gb/s link, against 20 us of latency: its pushes queue on the
    // server's links (async) and its gradients on a reduction parent's (sync). Jitter keeps messages from ending
    // at the very same instant, where the two may take them in a different order (the digest would then differ,
    // the times not).
    void starNetworkTimesMessagesAsSimGridDoes_data()
    {
        QTest::addColumn<QString>("args");
        const QString wide
            = QStringLiteral("--preset parabola --samples 4096 --layers 1,256,256,1 --lr 0.0001 --eval-every 0 ");
        QTest::addRow("async P8 datacenter")
            << wide + QStringLiteral("--mode async --workers 8 --batch 512 --steps 20 --jitter 0.2 --slow 2:3");
        QTest::addRow("async P32 datacenter") << wide
                + QStringLiteral("--mode async --workers 32 --batch 512 --steps 10 --slow-fraction 0.1:4 --jitter 0.2");
        QTest::addRow("sync P8 datacenter") << wide
                + QStringLiteral(
                    "--mode sync --topology tree --workers 8 --batch 512 --steps 20 --jitter 0.2 --slow 2:3");
        QTest::addRow("both P5 wan") << wide
                + QStringLiteral("--mode both --workers 5 --batch 320 --steps 6 --jitter 0.2");
    }

    void starNetworkTimesMessagesAsSimGridDoes()
    {
        QFETCH(QString, args);
        const bool wan = args.contains(QStringLiteral("wan"));
        const QStringList all = args.split(QLatin1Char(' '))
            + words(wan ? "--engine sim --cluster wan" : "--engine sim --cluster datacenter");
        QProcessEnvironment simgrid = QProcessEnvironment::systemEnvironment();
        simgrid.insert(QStringLiteral("SGDSCOPE_SIM_NETWORK"), QStringLiteral("simgrid"));
        const Run star = runApp(nextOut(), all);
        const Run solver = runApp(nextOut(), all, simgrid);
        QCOMPARE(star.exitCode, 0);
        QCOMPARE(solver.exitCode, 0);
        const Json& a = star.summary.at("runs");
        const Json& b = solver.summary.at("runs");
        QCOMPARE(a.size(), b.size());
        auto close = [](double x, double y) { return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(y), 1e-12); };
        for (std::size_t m = 0; m < a.size(); ++m) {
            QCOMPARE(a[m].at("network_model").get<std::string>(), std::string("star"));
            QCOMPARE(b[m].at("network_model").get<std::string>(), std::string("simgrid"));
            const std::string mode = a[m].at("mode").get<std::string>();
            const double seconds = a[m].at("seconds").get<double>();
            QVERIFY2(close(seconds, b[m].at("seconds").get<double>()),
                qPrintable(QStringLiteral("%1: %2 virtual s against SimGrid's %3")
                               .arg(QString::fromStdString(mode))
                               .arg(seconds, 0, 'g', 17)
                               .arg(b[m].at("seconds").get<double>(), 0, 'g', 17)));
            QCOMPARE(a[m].at("params_digest").get<std::string>(), b[m].at("params_digest").get<std::string>());
            const Json& wa = a[m].at("workers_detail");
            const Json& wb = b[m].at("workers_detail");
            QCOMPARE(wa.size(), wb.size());
            for (std::size_t w = 0; w < wa.size(); ++w)
                QVERIFY2(std::fabs(wa[w].at("idle_fraction").get<double>() - wb[w].at("idle_fraction").get<double>())
                        <= 1e-9,
                    qPrintable(QStringLiteral("%1 worker %2 idles %3 against SimGrid's %4")
                                   .arg(QString::fromStdString(mode))
                                   .arg(w)
                                   .arg(wa[w].at("idle_fraction").get<double>())
                                   .arg(wb[w].at("idle_fraction").get<double>())));
        }
    }

    // Hosts of 2 Gflop/s: every worker computes its samples at that speed.
    void platformFileRunsOnItsHosts()
    {
        const Run r = runApp(nextOut(),
            QStringList {QStringLiteral("--platform"), QStringLiteral(SGDSCOPE_TEST_DATA "/cluster-4hosts.xml")}
                + words("--engine sim --mode both --workers 3 --preset blobs --batch 96 --steps 10"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        for (const Json& run : r.summary.at("runs")) {
            QCOMPARE(run.at("cluster").get<std::string>(),
                std::string("platform " SGDSCOPE_TEST_DATA "/cluster-4hosts.xml"));
            const QString why = computedAtSpeed(run, 2e9);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // Compute is work on the worker's host: a host at half speed, whether declared, by its pstate or by an
    // availability profile, takes twice as long for the same samples (each worker has 32 of the 96).
    void hostAtHalfSpeedDoublesItsComputeSpans_data()
    {
        QTest::addColumn<QString>("slowHost");
        QTest::addRow("declared") << QStringLiteral("id=\"b\" speed=\"1Gf\"");
        QTest::addRow("pstate") << QStringLiteral("id=\"b\" speed=\"2Gf,1Gf\" pstate=\"1\"");
        // SimGrid reads a profile file from the platform file's folder.
        writeTestFile(m_dir, QStringLiteral("half.profile"), "0 0.5\n");
        QTest::addRow("availability profile") << QStringLiteral("id=\"b\" speed=\"2Gf\" speed_file=\"half.profile\"");
    }

    void hostAtHalfSpeedDoublesItsComputeSpans()
    {
        QFETCH(QString, slowHost);
        double compute[2] = {0, 0}; // worker 1's, on host b at full speed and at half
        double waits[2] = {0, 0}; // worker 0's
        for (const int slowed : {0, 1}) {
            const QString b = slowed ? slowHost : QStringLiteral("id=\"b\" speed=\"2Gf\"");
            const QString file = writePlatform(m_dir,
                QStringLiteral("half-%1-%2.xml")
                    .arg(QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-')))
                    .arg(slowed),
                {QStringLiteral("id=\"a\" speed=\"2Gf\""), b, QStringLiteral("id=\"c\" speed=\"2Gf\"")},
                QStringLiteral("bandwidth=\"10GBps\" latency=\"10us\""));
            const Run r = runApp(nextOut(),
                onPlatform(file, "--mode sync --topology tree --workers 3 --preset blobs --batch 96 --steps 20"));
            QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
            const Json& w = firstRun(r).at("workers_detail");
            compute[slowed] = w[1].at("compute_seconds").get<double>();
            waits[slowed] = w[0].at("idle_fraction").get<double>();
        }
        QVERIFY2(std::fabs(compute[1] / compute[0] - 2.0) <= 1e-6,
            qPrintable(QStringLiteral("half speed computes %1 times as long").arg(compute[1] / compute[0])));
        // And the others wait for it, most of the time (they compute half of it).
        QVERIFY2(waits[1] > 0.4 && waits[0] < 0.1,
            qPrintable(QStringLiteral("worker 0 idles %1, then %2 of its time").arg(waits[0]).arg(waits[1])));
    }

    // Messages cross the platform's links at their bandwidth: a gradient of message_bytes over a link of B bytes
    // per second and no latency takes message_bytes / B, and twice that at half the bandwidth.
    void linkAtHalfBandwidthDoublesMessageSpans()
    {
        double perMessage[2] = {0, 0};
        const double bandwidth[2] = {1e9, 0.5e9};
        for (int i = 0; i < 2; ++i) {
            const QString file = writePlatform(m_dir, QStringLiteral("link-%1.xml").arg(i),
                {QStringLiteral("id=\"a\" speed=\"2Gf\""), QStringLiteral("id=\"b\" speed=\"2Gf\"")},
                QStringLiteral("bandwidth=\"%1Bps\" latency=\"0s\"").arg(bandwidth[i]));
            const Run r = runApp(
                nextOut(), onPlatform(file, "--mode sync --topology tree --workers 2 --preset blobs --steps 20"));
            QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
            const Json& run = firstRun(r);
            // Worker 1 sends its gradient to worker 0 once an update; worker 0 sends it the parameters back.
            perMessage[i] = run.at("workers_detail")[1].at("communication_seconds").get<double>()
                / run.at("updates").get<double>();
            const double model = run.at("cost_model").at("message_bytes").get<double>() / bandwidth[i];
            QVERIFY2(std::fabs(perMessage[i] / model - 1.0) <= 1e-6,
                qPrintable(
                    QStringLiteral("a message took %1 s, the link's figure is %2 s").arg(perMessage[i]).arg(model)));
        }
        QVERIFY2(std::fabs(perMessage[1] / perMessage[0] - 2.0) <= 1e-6,
            qPrintable(QStringLiteral("ratio %1").arg(perMessage[1] / perMessage[0])));
    }

    // Several workers on one multi-core host (--placement pack) compute each on a core of their own, at the
    // host's speed; async's server takes the next host. --placement spread needs a host per worker. Sync runs on
    // the tree here: on a parameter server its server would take the next host too.
    void packedWorkersShareAMultiCoreHost()
    {
        const QString file = writePlatform(m_dir, QStringLiteral("cores.xml"),
            {QStringLiteral("id=\"big\" speed=\"2Gf\" core=\"4\""), QStringLiteral("id=\"small\" speed=\"2Gf\"")},
            QStringLiteral("bandwidth=\"10GBps\" latency=\"10us\""));
        const Run packed = runApp(nextOut(),
            onPlatform(
                file, "--placement pack --mode both --topology tree --workers 4 --preset blobs --batch 96 --steps 10"));
        QVERIFY2(packed.exitCode == 0, qPrintable(packed.stderrText));
        for (const Json& run : packed.summary.at("runs")) {
            QCOMPARE(run.at("placement").get<std::string>(), std::string("pack"));
            const QString why = computedAtSpeed(run, 2e9);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            // On one host, sync's gradients and parameters change hands in memory.
            if (run.at("mode").get<std::string>() == "sync")
                QCOMPARE(run.at("all_workers").at("communication_seconds").get<double>(), 0.0);
        }
        const QString out = nextOut();
        const Run spread
            = runApp(out, onPlatform(file, "--mode sync --topology tree --workers 4 --preset blobs --steps 10"));
        QCOMPARE(spread.exitCode, 2);
        QVERIFY2(
            spread.stderrText.contains(QStringLiteral("it has 2 hosts, and 4 workers need 4 with --placement spread")),
            qPrintable(spread.stderrText));
        QVERIFY(!QFileInfo::exists(out));
    }

    // Long work ends when the model says, also where the clock's own rounding is coarser than a femtosecond
    // (beyond 8 virtual seconds, where SimGrid's precision must follow the clock): hosts of 1 Mflop/s take about
    // 23 s for a worker's 48 samples. (A precision held at 1 fs passed it too here: SimGrid's end-of-activity test
    // fails only when the clock's rounding overshoots an end, which these runs did not hit.)
    void longWorkEndsOnTime()
    {
        const QString file = writePlatform(m_dir, QStringLiteral("slow.xml"),
            {QStringLiteral("id=\"a\" speed=\"1Mf\""), QStringLiteral("id=\"b\" speed=\"1Mf\""),
                QStringLiteral("id=\"c\" speed=\"1Mf\"")},
            QStringLiteral("bandwidth=\"1GBps\" latency=\"1ms\""));
        const Run r
            = runApp(nextOut(), onPlatform(file, "--mode both --workers 2 --preset blobs --batch 96 --steps 4"));
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        for (const Json& run : r.summary.at("runs")) {
            QVERIFY2(run.at("seconds").get<double>() > 60, "the run is shorter than its work");
            const QString why = computedAtSpeed(run, 1e6);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }
};

QTEST_GUILESS_MAIN(TestSimPlatforms)
#include "test_sim_platforms.moc"
