// The simulated local-mpi cluster (--engine sim --cluster local-mpi): its messages are timed by what its probe
// measured of this machine's Open MPI (summary.json's mpi_link_calibration), and without mpirun or the probe it
// is refused with one line and nothing written. Each run is its own sgdscope process (one SimGrid platform per
// process); the probe runs under mpirun --oversubscribe on this machine, as test_mpi's jobs do.
#include "AppRuns.h"
#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/run/MpiLinkCalibration.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>
#include <vector>

#include <sched.h>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// A message's simulated time against latency + bytes / bandwidth of the recorded figures: the same sums in
// another order (the spans are added over the run's updates).
constexpr double kSameFigures = 1e-6; // relative

// How long a run may take, its probe's mpirun job included, before it is given up: well inside the test's own limit.
constexpr int kRunTimeoutMs = 120000;

QProcessEnvironment mpiEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // Under AddressSanitizer Open MPI leaks at MPI_Finalize (as in test_mpi): the probe's leak check is off.
    if (env.contains(QStringLiteral("ASAN_OPTIONS")))
        env.insert(QStringLiteral("ASAN_OPTIONS"),
            env.value(QStringLiteral("ASAN_OPTIONS")) + QStringLiteral(":detect_leaks=0"));
    return env;
}

bool near(double a, double b)
{
    return std::fabs(a - b) <= kSameFigures * std::fabs(b);
}
} // namespace

class TestLocalMpi : public RunFolderTest
{
    Q_OBJECT

private slots:
    // Sync on 2 workers: worker 1 sends its gradient up and gets the parameters back, each message alone on its
    // links; so every update it waits latency + bytes / bandwidth twice for the network, and worker 0 sends the
    // parameters once, after packing them into the message (a copy at the measured memory bandwidth). All of it
    // from summary.json's own figures: the model times its messages by what the probe measured.
    void messagesTakeTheMeasuredTime()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty())
            QSKIP("mpirun is not installed (Debian: openmpi-bin)");
        const Run r = runApp(nextOut(),
            words(
                "--preset fashion-mnist --workers 2 --steps 12 --eval-every 0 --mode sync --topology tree --engine sim "
                "--cluster local-mpi"),
            mpiEnvironment(), {}, kRunTimeoutMs);
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& run = r.summary.at("runs").front();
        QCOMPARE(run.at("cluster").get<std::string>(), std::string("local-mpi"));
        QCOMPARE(run.at("network_model").get<std::string>(), std::string("star"));
        const Json& link = run.at("mpi_link_calibration");
        const double latency = link.at("latency_seconds").get<double>();
        const double bandwidth = link.at("bandwidth_bytes_per_second").get<double>();
        QVERIFY2(latency > 0 && bandwidth > 0, qPrintable(QString::fromStdString(link.dump())));
        QCOMPARE(link.at("processes").get<int>(), 2);
        QVERIFY(link.at("round_trips").get<int>() > 0);
        // What was measured at the bandwidth's size is what the model gives a message of that size.
        const double atBytes = link.at("bandwidth_measured_at_bytes").get<double>();
        QVERIFY2(near(latency + atBytes / bandwidth, link.at("one_way_seconds_at_those_bytes").get<double>()),
            qPrintable(QString::fromStdString(link.dump())));
        QVERIFY(run.contains("local_calibration"));

        const double bytes = run.at("cost_model").at("message_bytes").get<double>();
        // A copy at the measured memory bandwidth, at this job's share of a core (2 processes: 1, but on one CPU).
        const double copy = run.at("cost_model").at("copy_bytes").get<double>()
            / run.at("local_calibration").at("memory_bytes_per_second").get<double>()
            / link.at("core_share").get<double>();
        const double message = latency + bytes / bandwidth;
        const double updates = run.at("updates").get<double>();
        QCOMPARE(updates, 12.0);
        const Json& root = run.at("workers_detail")[0];
        const Json& leaf = run.at("workers_detail")[1];
        const double leafNetwork = leaf.at("wait_seconds").at("network").get<double>() / updates;
        const double rootCommunication = root.at("communication_seconds").get<double>() / updates;
        const QString figures = QStringLiteral("message %1 s, copy %2 s; worker 1 waits %3 s for the network, "
                                               "worker 0 communicates %4 s per update")
                                    .arg(message)
                                    .arg(copy)
                                    .arg(leafNetwork)
                                    .arg(rootCommunication);
        QVERIFY2(near(leafNetwork, 2.0 * message), qPrintable(figures));
        QVERIFY2(near(rootCommunication, message + copy), qPrintable(figures));
    }

    // The probe's ranks and four spinning processes pinned to one core: each round trip waits for the kernel's time
    // slices, so the round trips at the message size spread far more than half (measured here: 0.94 to 1.0; the
    // ranks also waited for the core 99% of the time), and summary.json and stderr say the links describe a busy
    // machine.
    void busyMachineIsSaidSo()
    {
#if defined(SGDSCOPE_SANITIZED)
        QSKIP("a sanitized calibration runs too long for this test's budget");
#endif
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty())
            QSKIP("mpirun is not installed (Debian: openmpi-bin)");
        cpu_set_t mine;
        CPU_ZERO(&mine);
        QVERIFY(::sched_getaffinity(0, sizeof mine, &mine) == 0);
        int core = 0;
        while (core < CPU_SETSIZE && !CPU_ISSET(core, &mine))
            ++core;
        const QString pin = QString::number(core);
        std::vector<std::unique_ptr<QProcess>> spinners;
        for (int i = 0; i < 4; ++i) {
            spinners.push_back(std::make_unique<QProcess>());
            spinners.back()->start(QStringLiteral("taskset"),
                {QStringLiteral("-c"), pin, QStringLiteral("sh"), QStringLiteral("-c"),
                    QStringLiteral("while :; do :; done")});
            QVERIFY(spinners.back()->waitForStarted());
        }
        const Run r = runApp(nextOut(),
            words("--preset fashion-mnist --workers 2 --steps 2 --eval-every 0 --mode sync --topology tree --engine "
                  "sim --cluster "
                  "local-mpi"),
            mpiEnvironment(), {QStringLiteral("taskset"), QStringLiteral("-c"), pin}, kRunTimeoutMs);
        for (auto& p : spinners) {
            p->kill();
            p->waitForFinished();
        }
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& link = r.summary.at("runs").front().at("mpi_link_calibration");
        const QString figures = QString::fromStdString(link.dump());
        QVERIFY2(link.at("busy").get<bool>(), qPrintable(figures));
        QVERIFY2(!link.at("waited_for_a_core_share").is_null(), qPrintable(figures)); // Linux's schedstat says
        QVERIFY2(r.stderrText.contains(QStringLiteral("warning: Open MPI's messages were measured on a busy machine")),
            qPrintable(r.stderrText));
    }

    // Without mpirun or a working probe, local-mpi cannot measure anything: one line naming --cluster local-mpi
    // and what to do, exit code 2, and no --out folder.
    void refusedWithoutMpirunOrProbe_data()
    {
        QTest::addColumn<QString>("path"); // PATH, or "" for this one
        QTest::addColumn<QString>("probe"); // SGDSCOPE_MPI_PROBE, or "" for the one beside sgdscope
        QTest::addColumn<QString>("says");
        QTest::addColumn<bool>("needsMpirun");
        QTest::addColumn<QString>("workers");
        QTest::addRow("no mpirun") << QStringLiteral("/nonexistent") << QString() << QStringLiteral("openmpi-bin")
                                   << false << QStringLiteral("2");
        QTest::addRow("no probe") << QString() << QStringLiteral("/nonexistent/sgdscope-mpi-probe")
                                  << QStringLiteral("'/nonexistent/sgdscope-mpi-probe' is missing") << false
                                  << QStringLiteral("2");
        // A program that is no probe: mpirun runs it, and it prints nothing of what the probe prints.
        QTest::addRow("bad probe") << QString() << QStringLiteral("/bin/true") << QStringLiteral("measuring Open MPI")
                                   << true << QStringLiteral("2");
        // An MPI job of 65 processes (64 workers and async's server) is more than local-mpi starts its probe with.
        QTest::addRow("too many processes") << QString() << QString()
                                            << QStringLiteral("--workers: 64 workers is too many for --cluster "
                                                              "local-mpi")
                                            << false << QStringLiteral("64");
    }
    void refusedWithoutMpirunOrProbe()
    {
        QFETCH(QString, path);
        QFETCH(QString, probe);
        QFETCH(QString, says);
        QFETCH(bool, needsMpirun);
        QFETCH(QString, workers);
        if (needsMpirun && QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty())
            QSKIP("mpirun is not installed (Debian: openmpi-bin)");
        QProcessEnvironment env = mpiEnvironment();
        if (!path.isEmpty())
            env.insert(QStringLiteral("PATH"), path);
        if (!probe.isEmpty())
            env.insert(QStringLiteral("SGDSCOPE_MPI_PROBE"), probe);
        const QString out = nextOut();
        const Run r = runApp(out,
            words("--preset blobs --steps 5 --engine sim --cluster local-mpi --workers") + QStringList {workers}, env,
            {}, kRunTimeoutMs);
        QCOMPARE(r.exitCode, 2);
        const QString line = r.stderrText.trimmed();
        QVERIFY2(!line.contains(QLatin1Char('\n')), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("--cluster local-mpi")), qPrintable(line));
        QVERIFY2(line.contains(says), qPrintable(line));
        QVERIFY2(!QDir(out).exists(), qPrintable(out));
    }

    // The figures follow from the round trips: the latency is half the small size's median; the bandwidth makes a
    // message of the measured size take half its median round trip. Unusable round trips are refused.
    void figuresFromRoundTrips()
    {
        const MpiLinkCalibration c = mpiLinkFromRoundTrips(
            {4e-6, 2e-6, 3e-6, 100e-6, 2.5e-6}, 8, {400e-6, 420e-6, 390e-6}, 1000000, "--cluster");
        QCOMPARE(c.latencySeconds, 1.5e-6);
        QCOMPARE(c.messageSeconds, 200e-6);
        QVERIFY(near(c.bandwidthBytesPerSecond, 1e6 / (200e-6 - 1.5e-6)));
        QCOMPARE(c.roundTrips, 3);
        QVERIFY(c.latencySpread > 0 && c.bandwidthSpread > 0);
        QVERIFY_THROWS_EXCEPTION(
            SgdError, mpiLinkFromRoundTrips({4e-6}, 8, {3e-6}, 1000000, "--cluster")); // faster than its latency
        QVERIFY_THROWS_EXCEPTION(SgdError, mpiLinkFromRoundTrips({}, 8, {3e-6}, 1000000, "--cluster"));
        // A machine so busy that the medians give no bandwidth: the shortest round trips, and it says it was busy.
        const MpiLinkCalibration busy
            = mpiLinkFromRoundTrips({2e-3, 4e-6, 3e-3}, 8, {1e-3, 200e-6, 1.5e-3}, 1000000, "--cluster");
        QVERIFY(!c.fromShortest && !c.busy());
        QVERIFY(busy.fromShortest && busy.busy());
        QCOMPARE(busy.latencySeconds, 2e-6);
        QCOMPARE(busy.messageSeconds, 100e-6);
        // More processes than cores: each gets its share of a core.
        MpiLinkCalibration shared;
        shared.cores = 2;
        QCOMPARE(shared.coreShare(3), 2.0 / 3.0);
        QCOMPARE(shared.coreShare(2), 1.0);
    }

    // A probe that reports fixed round trips (written here: 2 us at the small size, 202 us at the message size) sets
    // the links: a message of the run's size takes half the round trip, 101 us, so worker 1 of a 2-worker sync run
    // waits 202 us an update for the network. And each mode's job shares this machine's cores by its own count of
    // processes: sync's 2 workers, async's 2 workers and its server; its workers' compute per sample is slower by
    // that ratio (the same hosts, the same samples).
    void fixedProbeFiguresTimeTheRun()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty())
            QSKIP("mpirun is not installed (Debian: openmpi-bin)");
        const QString probe = m_dir.filePath(QStringLiteral("fixed-probe.sh"));
        {
            QFile script(probe);
            QVERIFY(script.open(QIODevice::WriteOnly));
            script.write("#!/bin/sh\n"
                         "[ \"${OMPI_COMM_WORLD_RANK:-0}\" = 0 ] || exit 0\n"
                         "echo \"round-trips $1 2e-6 2e-6 2e-6\"\n"
                         "echo \"round-trips $2 202e-6 202e-6 202e-6\"\n"
                         "echo \"waited-for-a-core 0\"\n"
                         "echo done\n");
            script.close();
            QVERIFY(script.setPermissions(script.permissions() | QFileDevice::ExeOwner));
        }
        QProcessEnvironment env = mpiEnvironment();
        env.insert(QStringLiteral("SGDSCOPE_MPI_PROBE"), probe);
        const Run r = runApp(nextOut(),
            words("--preset fashion-mnist --workers 2 --steps 12 --eval-every 0 --mode sync,async --topology tree "
                  "--engine sim "
                  "--cluster local-mpi"),
            env, {}, kRunTimeoutMs);
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& sync = r.summary.at("runs")[0];
        const Json& async = r.summary.at("runs")[1];
        const QString figures = QString::fromStdString(sync.at("mpi_link_calibration").dump());
        QVERIFY2(near(sync.at("mpi_link_calibration").at("latency_seconds").get<double>(), 1e-6), qPrintable(figures));
        const double leafNetwork = sync.at("workers_detail")[1].at("wait_seconds").at("network").get<double>()
            / sync.at("updates").get<double>();
        QVERIFY2(
            near(leafNetwork, 202e-6), qPrintable(QStringLiteral("%1 s a update; %2").arg(leafNetwork).arg(figures)));

        const int cores = sync.at("mpi_link_calibration").at("cores").get<int>();
        QVERIFY(cores >= 1);
        const double syncShare = std::min(1.0, cores / 2.0);
        const double asyncShare = std::min(1.0, cores / 3.0);
        QCOMPARE(sync.at("mpi_link_calibration").at("core_share").get<double>(), syncShare);
        QCOMPARE(async.at("mpi_link_calibration").at("core_share").get<double>(), asyncShare);
        auto computePerSample = [](const Json& run) {
            const Json& w = run.at("workers_detail")[0];
            return w.at("compute_seconds").get<double>() / w.at("samples").get<double>();
        };
        const double ratio = computePerSample(async) / computePerSample(sync);
        QVERIFY2(std::fabs(ratio - syncShare / asyncShare) <= 1e-6 * syncShare / asyncShare,
            qPrintable(QStringLiteral("async / sync compute per sample %1, shares %2 and %3")
                           .arg(ratio)
                           .arg(syncShare)
                           .arg(asyncShare)));
    }
};

QTEST_GUILESS_MAIN(TestLocalMpi)
#include "test_local_mpi.moc"
