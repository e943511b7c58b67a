// The MPI engine's async-like modes as users start them (a parameter server and worker processes under mpirun, on
// this machine): async at one worker gives the threads engine's bits and completes its budget with the staleness its
// worker count implies; ssp keeps its bound; dc-asgd compensates stale pushes and is async at one worker.
#include "MachineLoad.h"
#include "MpiRuns.h"
#include "core/common/Json.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {
// Of a worker's time, what bookkeeping between spans may leave in no span on a quiet machine (pushes of 64 to 192
// samples: 3 to 5% at N3 with batches of 96, well under with 192).
constexpr double kUnaccountedShare = 0.05;
} // namespace

class TestMpiAsync : public RunFolderTest
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Async with one worker (and the server) is sequential SGD: the same bits as the threads engine's P = 1.
    void asyncWithOneWorkerGivesTheThreadsEnginesBits()
    {
        const QStringList common = blasModelWithBatch(96)
            + QStringList {
                QStringLiteral("--mode"), QStringLiteral("async"), QStringLiteral("--steps"), QStringLiteral("8")};
        const QString threadsOut = nextOut();
        QCOMPARE(
            runThreads(common
                + QStringList {QStringLiteral("--workers"), QStringLiteral("1"), QStringLiteral("--out"), threadsOut})
                .exitCode,
            0);
        const QString mpiOut = nextOut();
        const Result mpi = runMpi(2, common + QStringList {QStringLiteral("--out"), mpiOut});
        QVERIFY2(mpi.exitCode == 0, qPrintable(mpi.output));
        const Json threads = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json* a = runOf(threads, "async");
        const Json b = readJson(mpiOut + QStringLiteral("/summary.json"));
        const Json* rb = runOf(b, "async");
        QVERIFY(a && rb);
        QCOMPARE(QString::fromStdString((*rb)["params_digest"].get<std::string>()),
            QString::fromStdString((*a)["params_digest"].get<std::string>()));
    }

    void asyncCompletesItsBudgetWithSaneStaleness_data()
    {
        QTest::addColumn<int>("processes");
        for (int n = 2; n <= 4; ++n)
            QTest::addRow("N%d", n) << n;
    }
    void asyncCompletesItsBudgetWithSaneStaleness()
    {
        QFETCH(int, processes);
        const QString out = nextOut();
        const QString trace = m_dir.filePath(QStringLiteral("trace%1.json").arg(processes));
        // Pushes of 64 to 192 samples: each worker's time accounted for within 5% needs pushes long against the
        // bookkeeping between spans (with batches of 96, after the kernels became faster, it was 3 to 5% at N3).
        const Result r = runMpi(processes,
            blasModelWithBatch(192)
                + QStringList {QStringLiteral("--mode"), QStringLiteral("async"), QStringLiteral("--steps"),
                    QStringLiteral("200"), QStringLiteral("--out"), out, QStringLiteral("--trace"), trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "async");
        QVERIFY(run);
        const int workers = processes - 1;
        QCOMPARE((*run)["workers"].get<int>(), workers);
        QCOMPARE((*run)["samples"].get<long long>(), 192LL * 200);
        // Each push is a worker's slice of the batch (192 / workers samples).
        QCOMPARE((*run)["updates"].get<long long>(), 200LL * workers);
        const double mean = (*run)["staleness"]["mean"].get<double>();
        if (workers == 1) {
            QCOMPARE(mean, 0.0); // one worker: every push is applied to the version it read
        } else {
            QVERIFY2(mean >= 0.5 && mean <= 2.0 * (processes - 2), qPrintable(QString::number(mean)));
        }
        // The time every worker rank reported is accounted for, up to a small residual and what the operating system
        // took from the ranks: a rank kept off its core between two spans has that time in no span (on a quiet machine
        // the residual is well under 5%; a machine busy with other work once left 7.5% unaccounted, with the ranks'
        // run-queue delay above that). The delay is each rank's own reading of /proc/self/schedstat (mpi.ranks).
        const double wall = (*run)["all_workers"]["wall_seconds"].get<double>() / workers;
        const double unaccounted = (*run)["all_workers"]["unaccounted_seconds"].get<double>();
        double takenByTheSystem = 0.0;
        for (int rank = 1; rank < processes; ++rank)
            takenByTheSystem += rankWaitedForACore(summary, "async", rank);
        if (takenByTheSystem > 0.5 * wall * workers)
            qInfo("the worker ranks waited %.3f s for a core of %.3f s: the residual's bound is that loose here",
                takenByTheSystem, wall * workers);
        QVERIFY2(std::abs(unaccounted) < kUnaccountedShare * wall * workers + takenByTheSystem,
            qPrintable(QStringLiteral("%1 of the workers' time unaccounted; %2")
                           .arg(unaccounted / (wall * workers))
                           .arg(rankWaitsText(summary, "async", processes))));
        // Every worker rank's spans reached rank 0's trace, on one time axis.
        const Json events = readJson(trace)["traceEvents"];
        std::vector<int> computes(static_cast<std::size_t>(workers), 0);
        for (const Json& e : events) {
            if (e["ph"] == "X" && e["name"] == "compute") {
                const int tid = e["tid"].get<int>();
                QVERIFY(tid >= 0 && tid < workers);
                ++computes[static_cast<std::size_t>(tid)];
            }
        }
        for (int w = 0; w < workers; ++w)
            QVERIFY2(computes[static_cast<std::size_t>(w)] > 0, qPrintable(QStringLiteral("worker %1").arg(w)));
    }

    // SSP across processes, its rule kept by the server (an 8x straggler among 3 workers). From the pushes in apply
    // order (metrics.csv): a worker is at most S + 1 ahead of the slowest when its push is applied, and the bound
    // binds (the lead reaches S + 1). The waits it imposes are named after the push that released them: most of
    // them the straggler's (a fast worker that is the slowest for a moment releases the others too: on one core,
    // where the fast workers' computing takes turns, 76% of the waits were the straggler's with a 4x straggler).
    void sspKeepsItsBoundAcrossProcesses_data()
    {
        QTest::addColumn<int>("bound");
        QTest::addRow("S = 0") << 0;
        QTest::addRow("S = 2") << 2;
    }
    void sspKeepsItsBoundAcrossProcesses()
    {
        QFETCH(int, bound);
        const QString out = nextOut();
        const Result r = runMpi(4,
            blasModelWithBatch(768)
                + QStringList {QStringLiteral("--mode"), QStringLiteral("ssp"), QStringLiteral("--ssp-bound"),
                    QString::number(bound), QStringLiteral("--slow"), QStringLiteral("1:8"), QStringLiteral("--steps"),
                    QStringLiteral("40"), QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        QFile csv(out + QStringLiteral("/metrics.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QList<QByteArray> header = csv.readLine().trimmed().split(',');
        const auto kindColumn = header.indexOf("kind");
        const auto workerColumn = header.indexOf("worker");
        std::vector<std::int64_t> applied(3, 0);
        std::int64_t largest = 0;
        std::int64_t pushes = 0;
        while (!csv.atEnd()) {
            const QList<QByteArray> row = csv.readLine().trimmed().split(',');
            if (row.value(kindColumn) != "update")
                continue;
            const int w = row.value(workerColumn).toInt();
            QVERIFY(w >= 0 && w < 3);
            ++applied[static_cast<std::size_t>(w)];
            ++pushes;
            largest = std::max(
                largest, applied[static_cast<std::size_t>(w)] - *std::min_element(applied.begin(), applied.end()));
        }
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "ssp");
        QVERIFY(run);
        QCOMPARE(pushes, (*run)["updates"].get<std::int64_t>());
        QCOMPARE(largest, static_cast<std::int64_t>(bound + 1));
        QVERIFY((*run)["ssp"]["largest_clock_lead"].get<std::int64_t>() <= bound);
        double made = 0.0;
        for (const Json& w : (*run)["workers_detail"])
            made += w["made_others_wait_seconds"].get<double>();
        const double byStraggler = (*run)["workers_detail"][1]["made_others_wait_seconds"].get<double>();
        QVERIFY2(made > 0 && byStraggler > 0.5 * made,
            qPrintable(QStringLiteral("the straggler made others wait %1 s of %2 s").arg(byStraggler).arg(made)));
    }

    // DC-ASGD across processes: the server compensates every push against the parameters it sent that worker
    // (with 2 workers the pushes are stale, so the term is not zero); with lambda 0 nothing is compensated.
    void dcAsgdCompensatesStalePushesAcrossProcesses()
    {
        const QString out = nextOut();
        const Result r = runMpi(3,
            blasModelWithBatch(96)
                + QStringList {QStringLiteral("--mode"), QStringLiteral("dc-asgd"), QStringLiteral("--steps"),
                    QStringLiteral("30"), QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "dc-asgd");
        QVERIFY(run);
        QVERIFY((*run)["staleness"]["mean"].get<double>() > 0.5);
        const Json& dc = (*run)["delay_compensation"];
        QCOMPARE(dc["pushes"].get<std::int64_t>(), (*run)["updates"].get<std::int64_t>());
        QVERIFY2(dc["mean_relative_size"].get<double>() > 0 && dc["max_relative_size"].get<double>() < 1,
            qPrintable(QString::fromStdString(dumpJson(dc, -1))));
        QVERIFY(summary["mpi"]["ranks"].contains("dc-asgd"));
    }

    // With one worker nothing is stale: the server compensates against the very parameters it applies to, the
    // term is zero, and dc-asgd (at its default lambda) is the threads engine's async, bit for bit. It fails if the
    // server compensated against another copy than the one it sent that push. (With more workers the order of
    // pushes depends on the machine's timing: no digest to compare.)
    void dcAsgdWithOneWorkerIsAsync()
    {
        const QStringList common = blasModelWithBatch(96)
            + QStringList {QStringLiteral("--steps"), QStringLiteral("12")}; // (momentum 0.9: blasModel's)
        const QString threadsOut = nextOut();
        const Result threads = runThreads(common
            + QStringList {QStringLiteral("--mode"), QStringLiteral("async"), QStringLiteral("--workers"),
                QStringLiteral("1"), QStringLiteral("--out"), threadsOut});
        QVERIFY2(threads.exitCode == 0, qPrintable(threads.output));
        const QString mpiOut = nextOut();
        const Result mpi = runMpi(2,
            common
                + QStringList {QStringLiteral("--mode"), QStringLiteral("dc-asgd"), QStringLiteral("--out"), mpiOut});
        QVERIFY2(mpi.exitCode == 0, qPrintable(mpi.output));
        const Json a = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json b = readJson(mpiOut + QStringLiteral("/summary.json"));
        const Json* async = runOf(a, "async");
        const Json* dc = runOf(b, "dc-asgd");
        QVERIFY(async && dc);
        QCOMPARE((*dc)["delay_compensation"]["max_relative_size"].get<double>(), 0.0);
        QCOMPARE(QString::fromStdString((*dc)["params_digest"].get<std::string>()),
            QString::fromStdString((*async)["params_digest"].get<std::string>()));
    }
};

QTEST_GUILESS_MAIN(TestMpiAsync)
#include "test_mpi_async.moc"
