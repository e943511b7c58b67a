// The local cluster (--cluster local) against this machine: at P = 2 it agrees with the threads engine here in a
// worker's step and in sync's wait for a straggler, and it says when it was measured on a busy machine. Each run is
// its own process: SimGrid allows one simulated platform per process.
#include "AppRuns.h"
#include "core/common/Json.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <sched.h>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// local cluster against the threads engine on this machine (P = 2, fashion-mnist): the median time of a
// worker's step, measured in the run and in the calibration at another moment of a shared 2-core machine, where
// two-thread rates move by up to 25% from run to run (../shared/peers/RESULTS.md).
constexpr double kLocalStepTolerance = 0.35; // relative
constexpr double kLocalIdleTolerance = 0.05; // measured: 0.747 (threads) against 0.739 (sim)

/// The median duration, in seconds, of the compute spans in the second half of a Chrome trace that --trace
/// wrote: the first half is the warm-up (the cores climb to their working speed over the first half second:
/// measured here, a run's first 40 steps at 2.3 ms, the next 110 at 1.8), which the local calibration leaves
/// out as well.
double medianComputeSpan(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nan("");
    const QByteArray bytes = file.readAll();
    const Json trace = parseJson(std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())), "trace");
    std::vector<std::pair<double, double>> spans; // (start, duration) in microseconds
    for (const Json& e : trace.at("traceEvents")) {
        if (e.contains("name") && e.at("name").get<std::string>() == "compute" && e.contains("dur"))
            spans.emplace_back(e.at("ts").get<double>(), e.at("dur").get<double>());
    }
    if (spans.empty())
        return std::nan("");
    std::sort(spans.begin(), spans.end());
    std::vector<double> durations;
    for (std::size_t i = spans.size() / 2; i < spans.size(); ++i)
        durations.push_back(spans[i].second * 1e-6);
    std::nth_element(
        durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2), durations.end());
    return durations[durations.size() / 2];
}
} // namespace

class TestSimLocal : public RunFolderTest
{
    Q_OBJECT

private slots:
    // The local cluster answers "what would P cores of this machine do": at P = 2 it agrees with the threads
    // engine on this machine in the time a worker's step takes (the median compute span; the calibration times
    // the threads engine's own worker step, so this checks how it measures: the warm-up, the statistic, the
    // pattern of the run) and, where the model itself is at stake, in sync's wait for a 4x straggler. Like with like:
    // wall-clock throughput and async staleness also measure how the operating system shares two cores with whatever
    // else runs (on a shared machine, async's pushes split 164 : 136 in one run and 200 : 100 in another), which
    // the model leaves out.
    void localClusterAgreesWithThisMachine_data()
    {
        QTest::addColumn<QString>("args");
        QTest::addRow("sync") << QStringLiteral("--mode sync");
        QTest::addRow("sync with a straggler") << QStringLiteral("--mode sync --slow 0:4");
        QTest::addRow("async") << QStringLiteral("--mode async");
    }

    void localClusterAgreesWithThisMachine()
    {
#if defined(SGDSCOPE_SANITIZED)
        QSKIP("a sanitizer slows the run but the calibration alike only in part (it times fewer calls)");
#endif
        QFETCH(QString, args);
        const QStringList common
            = words("--preset fashion-mnist --workers 2 --steps 300 --eval-every 0") + args.split(QLatin1Char(' '));
        // OpenMP's spinning wait, not the passive one the program chooses when OMP_WAIT_POLICY is unset (and
        // CTest sets for the other tests): a passive team takes a futex wake-up per barrier, which is the
        // operating system's time, not the model's. Measured here with a 4x straggler: the straggler waits 17%
        // of the wall time at barriers with passive waits (its partner wakes up 1.4 ms after the release),
        // 0.1% with active ones.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("OMP_WAIT_POLICY"), QStringLiteral("active"));
        // Three pairs, each a threads run and a simulated one back to back, and the test passes on the pair that
        // agrees best. It tests the calibration, not the steadiness of a shared machine: there, the same run's
        // step moves by half from one minute to the next (measured: 1.29 ms, then 2.03 ms), while a calibration
        // that measures something else than the run is off in every pair (the earlier one, a warm single chunk,
        // by 1.8x).
        const bool straggler = args.contains(QStringLiteral("--slow"));
        QStringList pairs;
        bool agreed = false;
        int quietPairs = 0; // pairs measured on a machine that was not busy
        for (int i = 0; i < 3 && !agreed; ++i) {
            Run runs[2];
            double steps[2] = {0, 0};
            for (const int simulated : {0, 1}) {
                const QString out = nextOut();
                const QString trace = out + QStringLiteral(".trace");
                runs[simulated] = runApp(out,
                    common + (simulated ? words("--engine sim --cluster local") : QStringList())
                        + QStringList {QStringLiteral("--trace"), trace},
                    env);
                QVERIFY2(runs[simulated].exitCode == 0, qPrintable(runs[simulated].stderrText));
                steps[simulated] = medianComputeSpan(trace);
                QVERIFY2(steps[simulated] > 0, qPrintable(QStringLiteral("no compute spans in %1").arg(trace)));
            }
            const Json& t = firstRun(runs[0]);
            const Json& s = firstRun(runs[1]);
            QString pair = QStringLiteral("a step of %1 ms (threads) and %2 ms (sim)")
                               .arg(steps[0] * 1e3, 0, 'f', 3)
                               .arg(steps[1] * 1e3, 0, 'f', 3);
            bool agrees = std::fabs(steps[1] / steps[0] - 1.0) <= kLocalStepTolerance;
            // A busy machine: the calibration says so itself, or, with a straggler, the threads run shows it (a
            // straggler 4x slower than its partner cannot wait for it unless something else took the cores).
            QString busy;
            const Json& calibration = s.at("local_calibration");
            if (calibration.at("busy").get<bool>())
                busy = QStringLiteral("the calibration's threads waited for a core %1 of the time, its steps spread "
                                      "by %2")
                           .arg(QString::fromStdString(calibration.at("waited_for_a_core_share").dump()))
                           .arg(calibration.at("spread").get<double>());
            if (straggler) {
                const double stragglerWait = t.at("workers_detail")[0].at("idle_fraction").get<double>();
                if (stragglerWait > kLocalIdleTolerance) {
                    busy = QStringLiteral("the threads run's 4x straggler waited %1 of its time").arg(stragglerWait);
                    agrees = false; // its waits measure the operating system: nothing to compare the model with
                }
                for (std::size_t w = 0; w < 2; ++w) {
                    const double a = t.at("workers_detail")[w].at("idle_fraction").get<double>();
                    const double b = s.at("workers_detail")[w].at("idle_fraction").get<double>();
                    pair += QStringLiteral(", worker %1 idles %2 and %3").arg(w).arg(a, 0, 'f', 3).arg(b, 0, 'f', 3);
                    agrees = agrees && std::fabs(a - b) <= kLocalIdleTolerance;
                }
            }
            agreed = agrees;
            if (!busy.isEmpty())
                pair += QStringLiteral(" (busy: %1)").arg(busy);
            else
                ++quietPairs;
            pairs << pair;
        }
        // Every pair on a busy machine: nothing that can be compared with the model.
        if (!agreed && quietPairs == 0)
            QSKIP(qPrintable(
                QStringLiteral("no pair was measured on a quiet machine: ") + pairs.join(QStringLiteral("; "))));
        QVERIFY2(agreed, qPrintable(QStringLiteral("no pair agrees: ") + pairs.join(QStringLiteral("; "))));
    }

    // The local cluster says when it was measured on a busy machine: pinned to one core with two processes that
    // spin there, its threads wait for the core most of the time, and summary.json and the warning say so.
    void localCalibrationSaysWhenTheMachineIsBusy()
    {
#if defined(SGDSCOPE_SANITIZED)
        QSKIP("a sanitized calibration runs too long for this test's budget");
#endif
        cpu_set_t mine;
        CPU_ZERO(&mine);
        QVERIFY(::sched_getaffinity(0, sizeof mine, &mine) == 0);
        int core = 0;
        while (core < CPU_SETSIZE && !CPU_ISSET(core, &mine))
            ++core;
        const QString pin = QString::number(core);
        std::vector<std::unique_ptr<QProcess>> spinners;
        for (int i = 0; i < 2; ++i) {
            spinners.push_back(std::make_unique<QProcess>());
            spinners.back()->start(QStringLiteral("taskset"),
                {QStringLiteral("-c"), pin, QStringLiteral("sh"), QStringLiteral("-c"),
                    QStringLiteral("while :; do :; done")});
            QVERIFY(spinners.back()->waitForStarted());
        }
        const Run r = runApp(nextOut(),
            words("--preset fashion-mnist --workers 2 --steps 20 --eval-every 0 --mode sync --engine sim --cluster "
                  "local"),
            QProcessEnvironment::systemEnvironment(), {QStringLiteral("taskset"), QStringLiteral("-c"), pin});
        for (auto& p : spinners) {
            p->kill();
            p->waitForFinished();
        }
        QVERIFY2(r.exitCode == 0, qPrintable(r.stderrText));
        const Json& summary = r.summary;
        const Json& c = summary.at("runs").front().at("local_calibration");
        QVERIFY2(c.at("busy").get<bool>() && c.at("waited_for_a_core_share").get<double>() > 0.2,
            qPrintable(QString::fromStdString(c.dump())));
        QVERIFY2(r.stderrText.contains(QStringLiteral("warning: the local cluster was measured on a busy machine")),
            qPrintable(r.stderrText));
        QVERIFY(c.at("host_flops").get<double>() > 0 && c.at("memory_bytes_per_second").get<double>() > 0);
        // local prices applies and copies as bytes, and says so in its cost model.
        const Json& cost = summary.at("runs").front().at("cost_model");
        QVERIFY2(cost.contains("apply_bytes") && cost.at("copy_bytes").get<double>() > 0,
            qPrintable(QString::fromStdString(cost.dump())));
    }
};

QTEST_GUILESS_MAIN(TestSimLocal)
#include "test_sim_local.moc"
