// The simulated cluster (--engine sim) as an engine: the threads engine's bits in sync (and in async at one worker),
// the same files from the same seed whatever this machine's threads, a memory estimate that holds, and refusals.
// Each run is its own process: SimGrid allows one simulated platform per process.
#include "SimPlatforms.h"
#include "core/common/Json.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace sgdscope;
using namespace sgdscope::testing;

class TestSimEngine : public RunFolderTest
{
    Q_OBJECT

private slots:
    void syncGivesTheThreadsEnginesBits_data()
    {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<int>("workers");
        for (const int p : {1, 2, 5, 16}) {
            // The parabola in 17 chunks of 3 (every worker has one), and a model whose products go to BLAS.
            QTest::addRow("parabola P%d", p) << QStringLiteral("--preset parabola --chunk 3 --steps 300") << p;
            QTest::addRow("blobs P%d", p) << QStringLiteral("--preset blobs --chunk 16 --steps 12") << p;
            // a learning rate that decays over the run: every engine counts the samples before an update alike
            QTest::addRow("blobs linear P%d", p)
                << QStringLiteral("--preset blobs --chunk 16 --steps 12 --lr-schedule linear") << p;
            // a convolutional network: convolutions, pooling and a flatten in the same chunk tree
            QTest::addRow("blobs conv P%d", p) << QStringLiteral(
                "--preset blobs --model input1x8x8,conv4x3x3p1,maxpool2,conv6x3x3,dense10 --samples 2048 --steps 8")
                                               << p;
        }
    }

    void syncGivesTheThreadsEnginesBits()
    {
        QFETCH(QString, workload);
        QFETCH(int, workers);
        const QStringList args = workload.split(QLatin1Char(' '))
            + QStringList {QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--workers"),
                QString::number(workers)};
        const Run threads = runApp(nextOut(), args);
        const Run sim = runApp(nextOut(), args + words("--engine sim --cluster datacenter"));
        QCOMPARE(threads.exitCode, 0);
        QCOMPARE(sim.exitCode, 0);
        QCOMPARE(firstRun(sim).at("engine").get<std::string>(), std::string("sim"));
        QCOMPARE(firstRun(sim).at("clock").get<std::string>(), std::string("virtual"));
        QCOMPARE(firstRun(sim).at("params_digest").get<std::string>(),
            firstRun(threads).at("params_digest").get<std::string>());
    }

    void asyncWithOneWorkerGivesTheThreadsEnginesBits()
    {
        const QStringList args = words("--preset blobs --mode async --workers 1 --steps 20");
        const Run threads = runApp(nextOut(), args);
        const Run sim = runApp(nextOut(), args + words("--engine sim --cluster wan"));
        QCOMPARE(sim.exitCode, 0);
        QCOMPARE(firstRun(sim).at("params_digest").get<std::string>(),
            firstRun(threads).at("params_digest").get<std::string>());
    }

    // A mode's result does not depend on the modes beside it: each of the six, alone, gives the same summary (every
    // figure but the real time it took) as in a list of all six, on a cluster with messages and stragglers. The
    // simulator's time precision follows its clock, so a mode simulated after others in one simulation came out
    // differently (async's digest changed); each mode of a list now gets a simulation of its own.
    void aModeGivesTheSameResultAloneAsInAList()
    {
        const QStringList common = words("--preset fashion-mnist --samples 4000 --engine sim --cluster datacenter "
                                         "--workers 16 --slow-fraction 0.1:4 --steps 40");
        const QStringList modes {QStringLiteral("sync"), QStringLiteral("async"), QStringLiteral("ssp"),
            QStringLiteral("backup"), QStringLiteral("local-sgd"), QStringLiteral("dc-asgd")};
        const Run list
            = runApp(nextOut(), common + QStringList {QStringLiteral("--mode"), modes.join(QLatin1Char(','))});
        QCOMPARE(list.exitCode, 0);
        QCOMPARE(list.summary.at("runs").size(), std::size_t(6));
        for (int m = 0; m < modes.size(); ++m) {
            const Run alone = runApp(nextOut(), common + QStringList {QStringLiteral("--mode"), modes[m]});
            QCOMPARE(alone.exitCode, 0);
            Json a = firstRun(alone);
            Json l = list.summary.at("runs").at(static_cast<std::size_t>(m));
            QCOMPARE(l.at("mode").get<std::string>(), modes[m].toStdString());
            QVERIFY(a.at("updates").get<std::int64_t>() > 0);
            for (Json* j : {&a, &l}) {
                j->erase("wall_clock_seconds"); // this machine's time and load, the figures that may differ
                j->erase("process_cpu");
            }
            QCOMPARE(QString::fromStdString(dumpJson(l)), QString::fromStdString(dumpJson(a)));
        }
    }

    // The estimate summary.json gives (and runs are refused by) holds what the process then uses: the resident
    // memory when the run was prepared plus the model's estimate, against the peak resident memory.
    void memoryEstimateHoldsOnTheSimulatedCluster_data()
    {
        QTest::addColumn<QString>("args");
        QTest::addRow("blobs async P256")
            << QStringLiteral("--preset blobs --mode async --workers 256 --batch 4096 --steps 6");
        QTest::addRow("blobs both P256 chunk 1")
            << QStringLiteral("--preset blobs --mode both --workers 256 --batch 4096 --chunk 1 --steps 6");
        // Several slices: the estimate holds for a run longer than one slice (at first the heap grew slice by
        // slice).
        QTest::addRow("parabola async P2048, 2 slices") << QStringLiteral(
            "--preset parabola --samples 4096 --lr 0.0001 --mode async --workers 2048 --batch 4096 --steps 160");
        QTest::addRow("parabola sync P1024, 5 slices") << QStringLiteral(
            "--preset parabola --samples 4096 --lr 0.0001 --mode sync --workers 1024 --batch 4096 --steps 300");
    }

    void memoryEstimateHoldsOnTheSimulatedCluster()
    {
#if defined(SGDSCOPE_SANITIZED)
        QSKIP("a sanitizer's shadow memory is not in the estimate");
#endif
        QFETCH(QString, args);
        const Run r = runApp(
            nextOut(), args.split(QLatin1Char(' ')) + words("--eval-every 0 --engine sim --cluster datacenter"));
        QCOMPARE(r.exitCode, 0);
        const Json& memory = r.summary.at("memory");
        QVERIFY2(memory.at("peak_resident_bytes").is_number() && memory.at("estimate_bytes").is_number(),
            "this kernel does not say how much memory the process holds");
        const double peak = memory.at("peak_resident_bytes").get<double>();
        const double estimate = memory.at("estimate_bytes").get<double>();
        QVERIFY2(peak >= 0.75 * estimate && peak <= 1.25 * estimate,
            qPrintable(QStringLiteral("peak resident %1 MB against an estimate of %2 MB")
                           .arg(peak / 1e6, 0, 'f', 1)
                           .arg(estimate / 1e6, 0, 'f', 1)));
    }

    // The same configuration and seed give the same files (but for the wall-clock seconds), with any number of
    // OpenMP threads for the math.
    void deterministicWithOneOrTwoThreads()
    {
        const QStringList args
            = words("--preset blobs --workers 6 --steps 30 --engine sim --cluster datacenter --jitter 0.3");
        QProcessEnvironment one = QProcessEnvironment::systemEnvironment();
        one.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
        QProcessEnvironment two = QProcessEnvironment::systemEnvironment();
        two.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("2"));
        const Run a = runApp(nextOut(), args, two);
        const Run b = runApp(nextOut(), args, two);
        const Run c = runApp(nextOut(), args, one);
        QCOMPARE(a.exitCode, 0);
        QVERIFY(!a.metrics.isEmpty());
        QVERIFY(a.metrics.startsWith("mode,kind,update,samples,virtual_seconds,"));
        auto withoutWall = [](Json summary) { // and this machine's memory, measured
            for (Json& run : summary.at("runs")) {
                run.erase("wall_clock_seconds");
                run.erase("process_cpu");
            }
            summary.erase("memory");
            return summary;
        };
        QCOMPARE(a.metrics, b.metrics);
        QCOMPARE(a.metrics, c.metrics);
        QCOMPARE(withoutWall(a.summary).dump(), withoutWall(b.summary).dump());
        QCOMPARE(withoutWall(a.summary).dump(), withoutWall(c.summary).dump());
    }

    void badInputIsRefused_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("needle");
        const QString data = QStringLiteral(SGDSCOPE_TEST_DATA);
        QTest::addRow("missing platform")
            << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--platform"),
                   data + QStringLiteral("/none.xml")}
            << QStringLiteral("--platform: '") + data + QStringLiteral("/none.xml' cannot be used: Unable to open");
        QTest::addRow("malformed platform") << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"),
            QStringLiteral("--platform"), data + QStringLiteral("/broken-platform.xml")}
                                            << QStringLiteral("cannot parse number:fast");
        QTest::addRow("platform without a route") << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"),
            QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--topology"), QStringLiteral("tree"),
            QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--platform"),
            data + QStringLiteral("/no-route-platform.xml")}
                                                  << QStringLiteral("there is no route from host");
        QTest::addRow("platform with a one-way route") << QStringList {QStringLiteral("--engine"),
            QStringLiteral("sim"), QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--topology"),
            QStringLiteral("tree"), QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--platform"),
            data + QStringLiteral("/one-way-route-platform.xml")}
                                                       << QStringLiteral("there is no route from host b to host a");
        // By default workers do not share hosts: more workers than the platform's hosts is refused.
        QTest::addRow("more workers than hosts")
            << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--workers"),
                   QStringLiteral("4"), QStringLiteral("--platform"), data + QStringLiteral("/cluster-4hosts.xml")}
            << QStringLiteral("it has 4 hosts, and 4 workers and a parameter server need 5 with --placement spread");
        QTest::addRow("more workers than cores")
            << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--placement"),
                   QStringLiteral("pack"), QStringLiteral("--workers"), QStringLiteral("4"),
                   QStringLiteral("--platform"), data + QStringLiteral("/cluster-4hosts.xml")}
            << QStringLiteral("its hosts have 4 cores in all, and 4 workers and a parameter server need 5");
        // What would stop the simulation half-way is refused before anything is written.
        const QStringList two {QStringLiteral("id=\"a\" speed=\"1Gf\""), QStringLiteral("id=\"b\" speed=\"0f\"")};
        QTest::addRow("host of speed 0") << onPlatform(writePlatform(m_dir, QStringLiteral("speed0.xml"), two,
                                                           QStringLiteral("bandwidth=\"1GBps\" latency=\"0s\"")),
            "--workers 1") << QStringLiteral("host 'b' has a speed of 0 flop/s; every host needs a speed above 0");
        const QStringList fine {QStringLiteral("id=\"a\" speed=\"1Gf\""), QStringLiteral("id=\"b\" speed=\"1Gf\"")};
        QTest::addRow("link of bandwidth 0") << onPlatform(
            writePlatform(m_dir, QStringLiteral("bw0.xml"), fine, QStringLiteral("bandwidth=\"0Bps\" latency=\"0s\"")),
            "--workers 1") << QStringLiteral("link 'l' has a bandwidth of 0 B/s; every link needs a bandwidth above 0");
        QTest::addRow("missing profile file") << onPlatform(
            writePlatform(m_dir, QStringLiteral("noprofile.xml"),
                {QStringLiteral("id=\"a\" speed=\"1Gf\" speed_file=\"no-such.profile\""), fine[1]},
                QStringLiteral("bandwidth=\"1GBps\" latency=\"0s\"")),
            "--workers 1") << QStringLiteral("Cannot open file 'no-such.profile'");
        writeTestFile(m_dir, QStringLiteral("zero.profile"), "0 1\n0.5 0\n");
        QTest::addRow("profile falling to 0")
            << onPlatform(writePlatform(m_dir, QStringLiteral("zeroprofile.xml"),
                              {QStringLiteral("id=\"a\" speed=\"1Gf\" speed_file=\"zero.profile\""), fine[1]},
                              QStringLiteral("bandwidth=\"1GBps\" latency=\"0s\"")),
                   "--workers 1")
            << QStringLiteral("speed_file 'zero.profile' line 2 sets the speed to 0; it must stay above 0");
        writeTestFile(m_dir, QStringLiteral("off.state"), "0.5 0\n");
        QTest::addRow("host that turns off") << onPlatform(
            writePlatform(m_dir, QStringLiteral("stateprofile.xml"),
                {QStringLiteral("id=\"a\" speed=\"1Gf\" state_file=\"off.state\""), fine[1]},
                QStringLiteral("bandwidth=\"1GBps\" latency=\"0s\"")),
            "--workers 1") << QStringLiteral("state_file 'off.state' turns a host off and on");
        QTest::addRow("placement without sim")
            << words("--placement pack") << QStringLiteral("--placement: applies to the simulated cluster only");
        QTest::addRow("unknown cluster") << words("--engine sim --cluster moon")
                                         << QStringLiteral("--cluster: unknown value 'moon'");
        QTest::addRow("cluster without sim")
            << words("--cluster wan") << QStringLiteral("--cluster: applies to the simulated cluster only");
        QTest::addRow("cluster and platform")
            << QStringList {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--cluster"),
                   QStringLiteral("wan"), QStringLiteral("--platform"), data + QStringLiteral("/cluster-4hosts.xml")}
            << QStringLiteral("--cluster: cannot be combined with --platform");
        QTest::addRow("lockfree parameter server")
            << words("--engine sim --async-apply lockfree")
            << QStringLiteral("--async-apply: the simulated cluster's async is a parameter server");
        QTest::addRow("too many threads")
            << words("--workers 300") << QStringLiteral("--workers: 300 is not allowed with --engine threads");
    }

    void badInputIsRefused()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, needle);
        const QString out = nextOut();
        const Run r = runApp(out, args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.stderrText.contains(needle), qPrintable(r.stderrText));
        QCOMPARE(r.stderrText.trimmed().count(QLatin1Char('\n')), 0);
        QVERIFY(!QFileInfo::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestSimEngine)
#include "test_sim_engine.moc"
