// The MPI engine's sync-like modes as users start them (mpirun -np N sgdscope --headless --engine mpi, on this
// machine): sync and local-sgd give the threads engine's bits for every N, also with ranks on different kernel paths;
// each wait is attributed to what it waited for; backup keeps the first P - B gradients and is sync at B = 0, as is
// sync on backup's wires (--topology ps, and by default beside backup) and on the all-reduce; the topologies not built
// across processes are refused.
#include "MachineLoad.h"
#include "MpiRuns.h"
#include "core/common/Json.h"
#include "core/nn/kernels/Isa.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <set>

using namespace sgdscope;
using namespace sgdscope::testing;

class TestMpiSync : public RunFolderTest
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void syncDigestEqualsThreadsEngine_data()
    {
        QTest::addColumn<QStringList>("model");
        QTest::addColumn<int>("processes");
        QTest::addColumn<QString>("topology"); // empty: MPI's default for sync (the tree)
        for (int n = 1; n <= 4; ++n) {
            QTest::addRow("parabola-N%d", n) << parabola << n << QString();
            QTest::addRow("blas-model-N%d", n) << blasModel << n << QString();
            QTest::addRow("conv-model-N%d", n) << convModel << n << QString();
        }
        // a rate that decays over the run: rank 0 applies it after the samples the run has applied, as threads do
        QTest::addRow("blas-model-linear-N3")
            << blasModel + QStringList {QStringLiteral("--lr-schedule"), QStringLiteral("linear")} << 3 << QString();
        // The all-reduce: each rank adds up and applies its segment; the parabola's few parameters leave some ranks
        // an empty segment. A decaying rate: every rank applies the rate rank 0 sent.
        for (int n = 1; n <= 4; ++n)
            QTest::addRow("allreduce-blas-model-N%d", n) << blasModel << n << QStringLiteral("allreduce");
        QTest::addRow("allreduce-parabola-N3") << parabola << 3 << QStringLiteral("allreduce");
        QTest::addRow("allreduce-conv-model-N3") << convModel << 3 << QStringLiteral("allreduce");
        QTest::addRow("allreduce-blas-model-linear-N2")
            << blasModel + QStringList {QStringLiteral("--lr-schedule"), QStringLiteral("linear")} << 2
            << QStringLiteral("allreduce");
    }
    void syncDigestEqualsThreadsEngine()
    {
        QFETCH(QStringList, model);
        QFETCH(int, processes);
        QFETCH(QString, topology);
        const QStringList wires
            = topology.isEmpty() ? QStringList {} : QStringList {QStringLiteral("--topology"), topology};
        const QStringList common = model
            + QStringList {
                QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--steps"), QStringLiteral("6")};
        const QString threadsOut = nextOut();
        const Result threads = runThreads(common
            + QStringList {
                QStringLiteral("--workers"), QString::number(processes), QStringLiteral("--out"), threadsOut});
        QCOMPARE(threads.exitCode, 0);
        const QString mpiOut = nextOut();
        const Result mpi = runMpi(processes, common + wires + QStringList {QStringLiteral("--out"), mpiOut});
        QVERIFY2(mpi.exitCode == 0, qPrintable(mpi.output));
        const Json a = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json b = readJson(mpiOut + QStringLiteral("/summary.json"));
        const Json* ra = runOf(a, "sync");
        const Json* rb = runOf(b, "sync");
        QVERIFY(ra && rb);
        QCOMPARE((*rb)["engine"].get<std::string>(), std::string("mpi"));
        QCOMPARE((*rb)["workers"].get<int>(), processes);
        QCOMPARE(QString::fromStdString((*rb)["topology"].get<std::string>()),
            topology.isEmpty() ? QStringLiteral("tree") : topology); // the tree: MPI's default wires for sync
        QCOMPARE((*rb)["updates"].get<long long>(), 6LL);
        QCOMPARE(QString::fromStdString((*rb)["params_digest"].get<std::string>()),
            QString::fromStdString((*ra)["params_digest"].get<std::string>()));
        QCOMPARE(b["mpi"]["processes"].get<int>(), processes);
        QCOMPARE(static_cast<int>(b["mpi"]["clock_offsets_seconds"].size()), processes);
        // Each rank computed its own chunks, as counted by that rank: the threads engine's worker r's share,
        // in a process of its own (one rank computing everything would show here).
        const Json& ranks = b["mpi"]["ranks"]["sync"];
        QCOMPARE(static_cast<int>(ranks.size()), processes);
        std::set<long long> pids;
        for (int r = 0; r < processes; ++r) {
            const Json& rank = ranks[static_cast<std::size_t>(r)];
            QCOMPARE(rank["rank"].get<int>(), r);
            QCOMPARE(rank["updates"].get<long long>(), 6LL);
            QCOMPARE(rank["computed_samples"].get<long long>(),
                (*ra)["workers_detail"][static_cast<std::size_t>(r)]["samples"].get<long long>());
            QVERIFY(rank["computed_samples"].get<long long>() > 0);
            pids.insert(rank["pid"].get<long long>());
        }
        QCOMPARE(static_cast<int>(pids.size()), processes);
        // Only the all-reduce has every rank apply (its segment): on the tree rank 0 alone applies. (The parabola's
        // last ranks have empty segments.)
        if (model != parabola) {
            for (int w = 1; w < processes; ++w)
                QCOMPARE((*rb)["workers_detail"][static_cast<std::size_t>(w)]["apply_seconds"].get<double>() > 0,
                    topology == QStringLiteral("allreduce"));
        }
    }

    // On the other wires, too, the waits are named after the straggler that caused them: sync on the all-reduce
    // (2 ranks, each a worker) and local-sgd with rank 0 as a server (3 ranks, 2 workers), worker 1 eight times
    // slower. Its delay is a sleep, the same under any load: the other worker waits at least about that long at the
    // barrier, and most of its barrier waits are named after worker 1 (the rest after the one that sent last when
    // worker 1 was not the last, as after its apply in the all-gather).
    void stragglersAreNamedOnEveryWires_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("topology");
        QTest::addColumn<int>("processes");
        QTest::addRow("sync-allreduce") << QStringLiteral("sync") << QStringLiteral("allreduce") << 2;
        QTest::addRow("local-sgd-ps") << QStringLiteral("local-sgd") << QStringLiteral("ps") << 3;
    }
    void stragglersAreNamedOnEveryWires()
    {
        QFETCH(QString, mode);
        QFETCH(QString, topology);
        QFETCH(int, processes);
        const QString out = nextOut();
        const Result r = runMpi(processes,
            blasModel
                + QStringList {QStringLiteral("--mode"), mode, QStringLiteral("--topology"), topology,
                    QStringLiteral("--steps"), QStringLiteral("40"), QStringLiteral("--slow"), QStringLiteral("1:8"),
                    QStringLiteral("--out"), out}
                + (mode == QStringLiteral("local-sgd")
                        ? QStringList {QStringLiteral("--local-steps"), QStringLiteral("2")}
                        : QStringList {}));
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, mode.toStdString().c_str());
        QVERIFY(run);
        const Json& workers = (*run)["workers_detail"];
        QCOMPARE(static_cast<int>(workers.size()), 2); // a server has no row
        const Json& straggler = workers[std::size_t {1}];
        const Json& other = workers[std::size_t {0}];
        const double delay = straggler["delay_seconds"].get<double>();
        const double barrier = other["wait_seconds"]["barrier"].get<double>();
        const double made = straggler["made_others_wait_seconds"].get<double>();
        const double otherMade = other["made_others_wait_seconds"].get<double>();
        const QString figures = QStringLiteral("worker 1 slept %1 s; worker 0 waited %2 s at the barrier, %3 s of it "
                                               "named after worker 1; worker 0 made others wait %4 s")
                                    .arg(delay)
                                    .arg(barrier)
                                    .arg(made)
                                    .arg(otherMade);
        QVERIFY2(delay > 0 && barrier > 0.5 * delay, qPrintable(figures));
        QVERIFY2(made >= 0.5 * barrier && made <= barrier + 1e-9, qPrintable(figures));
        QVERIFY2(otherMade < made, qPrintable(figures));
    }

    // Local-sgd averages on the tree or a server: across processes the all-reduce is refused before anything runs, with
    // the reason.
    void topologiesNotBuiltAcrossProcessesAreRefused()
    {
        const QString out = nextOut();
        Result r = runMpi(2,
            parabola
                + QStringList {QStringLiteral("--mode"), QStringLiteral("local-sgd"), QStringLiteral("--topology"),
                    QStringLiteral("allreduce"), QStringLiteral("--steps"), QStringLiteral("2"),
                    QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode != 0
                && r.output.contains(QStringLiteral(
                    "local-sgd averages its models on the tree or on rank 0 as a server, not on allreduce")),
            qPrintable(r.output));
        QVERIFY(!QFileInfo::exists(out));
    }

    // Each wait is attributed to what it waited for: with one worker eight times slower, the others wait for it
    // (barrier), while the straggler itself waits only for messages on the wire (network) and for rank 0's
    // combine and apply (read), never for the slowest worker. Rank 0 is a worker too: when it is the
    // straggler, the others' wait for it is a barrier as well, not the network.
    void syncWaitsAreAttributedToWhatTheyWaitedFor_data()
    {
        QTest::addColumn<int>("straggler");
        QTest::addRow("worker-1") << 1;
        QTest::addRow("worker-0") << 0;
    }
    void syncWaitsAreAttributedToWhatTheyWaitedFor()
    {
        QFETCH(int, straggler);
        const QString out = nextOut();
        const Result r = runMpi(2,
            blasModel
                + QStringList {QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--steps"),
                    QStringLiteral("40"), QStringLiteral("--slow"), QStringLiteral("%1:8").arg(straggler),
                    QStringLiteral("--out"), out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "sync");
        QVERIFY(run);
        const Json& workers = (*run)["workers_detail"];
        auto wait = [&](int w, const char* kind) {
            return workers[static_cast<std::size_t>(w)]["wait_seconds"][kind].get<double>();
        };
        auto wall = [&](int w) { return workers[static_cast<std::size_t>(w)]["wall_seconds"].get<double>(); };
        // The straggler waited hardly at all for the slowest worker (itself): a tenth of what the other waited for it
        // at the barrier, and more only when the other was kept off its core for longer than the straggler's delay,
        // which each rank measures as its run-queue delay (mpi.ranks; on a machine busy with other work the straggler
        // once waited 0.0066 s at the barrier, half its own waits but a fortieth of the other's). Two ranks, so that on
        // a 2-core machine each has a core: with three, the ranks that poll at the barrier kept one another off their
        // cores for longer than the straggler's own waits.
        double othersBarrier = 0.0;
        double othersKeptOff = 0.0;
        for (int rank = 0; rank < 2; ++rank) {
            if (rank != straggler) {
                othersBarrier += wait(rank, "barrier");
                othersKeptOff += rankWaitedForACore(summary, "sync", rank);
            }
        }
        const double barrierBound = 0.1 * othersBarrier + 0.01 * wall(straggler) + othersKeptOff;
        // Where the bound reaches the straggler's whole time, the check could not fail: it is left out, and the test
        // says so at its end (after its other checks).
        QString unchecked;
        if (barrierBound >= wall(straggler))
            unchecked = QStringLiteral("the other rank waited %1 s for a core: the bound (%2 s) reached the "
                                       "straggler's %3 s, so its barrier wait was not checked")
                            .arg(othersKeptOff)
                            .arg(barrierBound)
                            .arg(wall(straggler));
        else
            QVERIFY2(wait(straggler, "barrier") < barrierBound,
                qPrintable(QString::number(wait(straggler, "barrier")) + QStringLiteral(" s against a bound of ")
                    + QString::number(barrierBound) + QStringLiteral(" s; ") + rankWaitsText(summary, "sync", 2)));
        // The others waited for the straggler's injected delay (both measured: a busy machine stretches both).
        const double delay = workers[static_cast<std::size_t>(straggler)]["delay_seconds"].get<double>();
        QVERIFY(delay > 0);
        for (int w = 0; w < 2; ++w) {
            if (w != straggler)
                QVERIFY2(wait(w, "barrier") > 0.5 * delay,
                    qPrintable(QStringLiteral("worker %1: %2 against a delay of %3")
                                   .arg(w)
                                   .arg(wait(w, "barrier"))
                                   .arg(delay)));
        }
        if (straggler != 0)
            QVERIFY(wait(straggler, "read") > 0); // rank 0 combined and applied while the straggler waited
        // Who made whom wait: the others' barrier waits are named after the straggler, most of them (the rest after
        // rank 0, for its own part: about 7/8 of them the straggler's with its delay of 7 computes; 0.87 on a
        // busy machine, 0.895 on one core).
        double barrier = 0.0;
        for (int w = 0; w < 2; ++w)
            barrier += w == straggler ? 0.0 : wait(w, "barrier");
        const double made = workers[static_cast<std::size_t>(straggler)]["made_others_wait_seconds"].get<double>();
        QVERIFY2(made >= 0.75 * barrier && made <= barrier + 1e-9,
            qPrintable(QStringLiteral("the straggler made others wait %1 s of their %2 s").arg(made).arg(barrier)));
        if (!unchecked.isEmpty())
            QSKIP(qPrintable(unchecked));
    }

    // Backup workers across processes (a parameter server and 3 workers). With B = 0 every gradient is kept: the
    // threads engine's sync, bit for bit (momentum, K = 2, a straggler). With B = 1 and a 50x straggler the
    // update goes on without it: its straggler delays are cut short when the next parameters arrive (a delay ends
    // early only then: uncut it lasts 49x the compute before it; with 8x, on a busy machine, the others took
    // longer than that in 27 updates of 40), the fast workers no longer wait for it (in sync each would wait at
    // least its delay), and the waits are not named after it.
    void backupAcrossProcesses()
    {
        const QStringList common
            = blasModelWithBatch(768) + QStringList {QStringLiteral("--accum"), QStringLiteral("2")};
        const QStringList slow4 {
            QStringLiteral("--slow"), QStringLiteral("1:4"), QStringLiteral("--steps"), QStringLiteral("40")};
        const QString threadsOut = nextOut();
        const Result threads = runThreads(common + slow4
            + QStringList {QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--workers"),
                QStringLiteral("3"), QStringLiteral("--out"), threadsOut});
        QVERIFY2(threads.exitCode == 0, qPrintable(threads.output));
        const QString noBackupOut = nextOut();
        // Sync beside backup takes backup's wires by default (ps: rank 0 its server, keeping every gradient; alone
        // it takes the tree, syncDigestEqualsThreadsEngine): with B = 0 both are the threads engine's sync at P = 3,
        // bit for bit.
        const Result noBackup = runMpi(4,
            common + slow4
                + QStringList {QStringLiteral("--mode"), QStringLiteral("sync,backup"),
                    QStringLiteral("--backup-workers"), QStringLiteral("0"), QStringLiteral("--out"), noBackupOut});
        QVERIFY2(noBackup.exitCode == 0, qPrintable(noBackup.output));
        const Json a = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json b = readJson(noBackupOut + QStringLiteral("/summary.json"));
        const Json* sync = runOf(a, "sync");
        const Json* backupZero = runOf(b, "backup");
        const Json* syncOnServer = runOf(b, "sync");
        QVERIFY(sync && backupZero && syncOnServer);
        QCOMPARE(QString::fromStdString((*backupZero)["params_digest"].get<std::string>()),
            QString::fromStdString((*sync)["params_digest"].get<std::string>()));
        QCOMPARE(QString::fromStdString((*syncOnServer)["params_digest"].get<std::string>()),
            QString::fromStdString((*sync)["params_digest"].get<std::string>()));
        QCOMPARE((*syncOnServer)["topology"].get<std::string>(), std::string("ps"));
        QCOMPARE((*syncOnServer)["workers"].get<int>(), 3);
        QVERIFY(b["mpi"]["ranks"].contains("sync"));

        const QString out = nextOut();
        const QString trace = m_dir.filePath(QStringLiteral("backup-trace.json"));
        const Result r = runMpi(4,
            common
                + QStringList {QStringLiteral("--slow"), QStringLiteral("1:50"), QStringLiteral("--steps"),
                    QStringLiteral("150"), QStringLiteral("--mode"), QStringLiteral("backup"), QStringLiteral("--out"),
                    out, QStringLiteral("--trace"), trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "backup");
        QVERIFY(run);
        QCOMPARE((*run)["updates"].get<long long>(), 150LL);
        // The straggler's delays, each against the compute before it.
        std::vector<std::pair<double, std::string>> straggler; // (start, name) of worker 1's compute and delay
        std::map<double, double> duration;
        const Json events = readJson(trace)["traceEvents"];
        for (const Json& e : events) {
            if (e["ph"] == "X" && e["tid"] == 1 && (e["name"] == "compute" || e["name"] == "delay")) {
                straggler.emplace_back(e["ts"].get<double>(), e["name"].get<std::string>());
                duration[e["ts"].get<double>()] = e["dur"].get<double>();
            }
        }
        std::sort(straggler.begin(), straggler.end());
        // A delay split at an update's edge is one delay: its parts are summed.
        int delays = 0;
        int cut = 0;
        for (std::size_t i = 0; i < straggler.size(); ++i) {
            if (straggler[i].second != "compute")
                continue;
            double delay = 0.0;
            std::size_t j = i + 1;
            for (; j < straggler.size() && straggler[j].second == "delay"; ++j)
                delay += duration[straggler[j].first];
            if (j == i + 1)
                continue;
            ++delays;
            cut += delay < 0.95 * 49 * duration[straggler[i].first] ? 1 : 0;
        }
        QVERIFY2(
            delays >= 30 && cut >= delays / 2, qPrintable(QStringLiteral("%1 of %2 delays cut").arg(cut).arg(delays)));
        const Json& workers = (*run)["workers_detail"];
        const double injected = 49 * workers[1]["compute_seconds"].get<double>();
        const double fastBarrier
            = workers[0]["wait_seconds"]["barrier"].get<double>() + workers[2]["wait_seconds"]["barrier"].get<double>();
        QVERIFY2(fastBarrier < injected,
            qPrintable(QStringLiteral("the fast workers waited %1 s for the update; the straggler's injected delay "
                                      "would be %2 s")
                           .arg(fastBarrier)
                           .arg(injected)));
        double made = 0.0;
        for (const Json& w : workers)
            made += w["made_others_wait_seconds"].get<double>();
        QVERIFY2(workers[1]["made_others_wait_seconds"].get<double>() <= 0.1 * made,
            qPrintable(QString::fromStdString(dumpJson(workers, -1))));
        QVERIFY(summary["mpi"]["ranks"].contains("backup"));
        // Every worker's time is accounted for, up to a small residual (the run is long enough, 0.4 s here, that a
        // few milliseconds of a process pre-empted between two spans do not count) and what the operating system
        // took from the worker ranks (their own reading of /proc/self/schedstat, mpi.ranks): a rank kept off its core
        // between two spans has that time in no span, as in test_mpi_async.
        const double unaccounted = (*run)["all_workers"]["unaccounted_seconds"].get<double>();
        const double wall = (*run)["all_workers"]["wall_seconds"].get<double>();
        double takenByTheSystem = 0.0;
        for (int rank = 1; rank < 4; ++rank)
            takenByTheSystem += rankWaitedForACore(summary, "backup", rank);
        QVERIFY2(std::abs(unaccounted) < 0.05 * wall + takenByTheSystem,
            qPrintable(QStringLiteral("%1 of the workers' time unaccounted; %2")
                           .arg(unaccounted / wall)
                           .arg(rankWaitsText(summary, "backup", 4))));
    }

    // Backup with fewer samples than workers (a batch of 2, 3 workers): the update waits for the first of the two
    // workers that have samples, never for one without (which would apply nothing: a division by zero samples).
    void backupWithWorkersWithoutSamples()
    {
        const QString out = nextOut();
        const Result r = runMpi(4,
            QStringList {QStringLiteral("--preset"), QStringLiteral("parabola"), QStringLiteral("--batch"),
                QStringLiteral("2"), QStringLiteral("--steps"), QStringLiteral("30"), QStringLiteral("--mode"),
                QStringLiteral("backup"), QStringLiteral("--slow"), QStringLiteral("0:50"), QStringLiteral("--out"),
                out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json summary = readJson(out + QStringLiteral("/summary.json"));
        const Json* run = runOf(summary, "backup");
        QVERIFY(run);
        QVERIFY(!(*run)["diverged"].get<bool>());
        QVERIFY2((*run)["final_loss"].is_number(), qPrintable(QString::fromStdString(dumpJson(*run, -1))));
        // Each update applies one of the two samples.
        QCOMPARE((*run)["backup"]["applied_samples"].get<long long>(), 30LL);
    }

    // Local SGD across processes: every rank takes its local steps on its own model, rank 0 averages them in
    // worker order; the same bits as the threads engine's local-sgd (momentum, a straggler, K = 2, and a budget
    // whose last round is shorter than H).
    void localSgdGivesTheThreadsEnginesBits_data()
    {
        QTest::addColumn<int>("processes");
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<QString>("topology");
        QTest::addRow("N2") << 2 << QStringLiteral("constant") << QString(); // MPI's default for local-sgd: the tree
        QTest::addRow("N3") << 3 << QStringLiteral("constant") << QStringLiteral("tree");
        // each rank's local steps take the rate of their place in the run (its global step), as the threads' do
        QTest::addRow("N3 linear") << 3 << QStringLiteral("linear") << QStringLiteral("tree");
        // rank 0 as a server averaging N - 1 workers' models (backup's wires): the threads engine's bits at N - 1
        QTest::addRow("ps N3") << 3 << QStringLiteral("constant") << QStringLiteral("ps");
        QTest::addRow("ps N4 linear") << 4 << QStringLiteral("linear") << QStringLiteral("ps");
    }
    void localSgdGivesTheThreadsEnginesBits()
    {
        QFETCH(int, processes);
        QFETCH(QString, schedule);
        QFETCH(QString, topology);
        const bool server = topology == QStringLiteral("ps");
        const QStringList wires
            = topology.isEmpty() ? QStringList {} : QStringList {QStringLiteral("--topology"), topology};
        const int workers = server ? processes - 1 : processes;
        const QStringList common = blasModelWithBatch(384)
            + QStringList {QStringLiteral("--mode"), QStringLiteral("local-sgd"), QStringLiteral("--local-steps"),
                QStringLiteral("3"), QStringLiteral("--steps"), QStringLiteral("20"), QStringLiteral("--accum"),
                QStringLiteral("2"), QStringLiteral("--slow"), QStringLiteral("1:2"), QStringLiteral("--lr-schedule"),
                schedule};
        const QString threadsOut = nextOut();
        const Result threads = runThreads(common
            + QStringList {QStringLiteral("--workers"), QString::number(workers), QStringLiteral("--out"), threadsOut});
        QVERIFY2(threads.exitCode == 0, qPrintable(threads.output));
        const QString mpiOut = nextOut();
        const Result mpi = runMpi(processes, common + wires + QStringList {QStringLiteral("--out"), mpiOut});
        QVERIFY2(mpi.exitCode == 0, qPrintable(mpi.output));
        const Json a = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json b = readJson(mpiOut + QStringLiteral("/summary.json"));
        const Json* ra = runOf(a, "local-sgd");
        const Json* rb = runOf(b, "local-sgd");
        QVERIFY(ra && rb);
        QCOMPARE((*rb)["workers"].get<int>(), workers);
        QCOMPARE(QString::fromStdString((*rb)["topology"].get<std::string>()),
            topology.isEmpty() ? QStringLiteral("tree") : topology);
        // every worker's samples were computed by its own rank; a server computes none
        const Json& ranks = b["mpi"]["ranks"]["local-sgd"];
        QCOMPARE(static_cast<int>(ranks.size()), processes);
        QCOMPARE(ranks[std::size_t {0}]["computed_samples"].get<long long>() == 0, server);
        for (int r = 1; r < processes; ++r)
            QVERIFY(ranks[static_cast<std::size_t>(r)]["computed_samples"].get<long long>() > 0);
        QCOMPARE((*rb)["updates"].get<long long>(), 7LL); // rounds of 3, 3, 3, 3, 3, 3 and 2 steps
        QCOMPARE((*rb)["samples"].get<long long>(), 384LL * 20);
        QCOMPARE(QString::fromStdString((*rb)["params_digest"].get<std::string>()),
            QString::fromStdString((*ra)["params_digest"].get<std::string>()));
        QVERIFY((*rb)["local_sgd"]["mean_model_spread"].get<double>() > 0);
    }

    // Ranks on different kernel paths (as on different CPUs) run one job, with the threads engine's bits: their
    // configuration check compares the kernels' order of operations, not the instruction set.
    void ranksOnDifferentKernelPathsGiveTheSameBits()
    {
        const QStringList common = blasModel
            + QStringList {
                QStringLiteral("--mode"), QStringLiteral("sync"), QStringLiteral("--steps"), QStringLiteral("6")};
        const QString threadsOut = nextOut();
        QCOMPARE(
            runThreads(common
                + QStringList {QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--out"), threadsOut})
                .exitCode,
            0);
        const QString out = nextOut();
        const QStringList rank
            = QStringList {QStringLiteral("--headless"), QStringLiteral("--engine"), QStringLiteral("mpi")} + common
            + QStringList {QStringLiteral("--out"), out};
        // rank 0 on the scalar reference, rank 1 on the fastest path this CPU has
        QStringList args = QStringList {QStringLiteral("-x"), QStringLiteral("SGDSCOPE_ISA=scalar")} + mpirunArgs(1)
            + rank
            + QStringList {QStringLiteral(":"), QStringLiteral("-x"),
                QStringLiteral("SGDSCOPE_ISA=") + QString::fromStdString(isaName(fastestIsa()))}
            + mpirunArgs(1).mid(3) + rank;
        const Result r = mpirun(args);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Json threads = readJson(threadsOut + QStringLiteral("/summary.json"));
        const Json* a = runOf(threads, "sync");
        const Json b = readJson(out + QStringLiteral("/summary.json"));
        const Json* rb = runOf(b, "sync");
        QVERIFY(a && rb);
        QCOMPARE(QString::fromStdString((*rb)["kernels"]["path"].get<std::string>()), QStringLiteral("scalar"));
        QCOMPARE(QString::fromStdString((*rb)["params_digest"].get<std::string>()),
            QString::fromStdString((*a)["params_digest"].get<std::string>()));
    }
};

QTEST_GUILESS_MAIN(TestMpiSync)
#include "test_mpi_sync.moc"
