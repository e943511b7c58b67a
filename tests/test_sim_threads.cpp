// The simulated cluster in this process (no child, no fork), so that ThreadSanitizer sees its OpenMP batches: the
// sync workers' parts and async's gradients in flight are computed on this machine's threads, and the results do
// not depend on how many.
#include "core/engines/TrainerFactory.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/Experiment.h"
#include "core/run/RunConfig.h"

#include <QTest>

#include <omp.h>

using namespace sgdscope;

namespace {

/// Blobs on the datacenter cluster, 8 workers with stragglers: each async push is 512 samples, enough math
/// (tens of Mflop) that the gradients in flight are computed in parallel.
PreparedRun simulatedRun()
{
    ConfigBuilder b;
    b.applyPreset("blobs", "test");
    b.applyOption("engine", "sim");
    b.applyOption("cluster", "datacenter");
    b.applyOption(
        "mode", "sync,async,ssp,backup,local-sgd,dc-asgd"); // hosts for every mode: the platform never changes
    b.applyOption("workers", "8");
    b.applyOption("batch", "4096");
    b.applyOption("steps", "6");
    b.applyOption("jitter", "0.3");
    b.applyOption("slow", "2:3");
    return prepareRun(b.resolve());
}

} // namespace

class TestSimThreads : public QObject
{
    Q_OBJECT

private slots:
    // One SimGrid platform per process: every run here is on the same datacenter cluster.
    void digestsDoNotDependOnTheThreadCount_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addRow("sync") << QStringLiteral("sync");
        QTest::addRow("async") << QStringLiteral("async");
        QTest::addRow("backup") << QStringLiteral("backup");
        QTest::addRow("dc-asgd") << QStringLiteral("dc-asgd");
        QTest::addRow("ssp") << QStringLiteral("ssp");
        QTest::addRow("local-sgd") << QStringLiteral("local-sgd");
    }

    void digestsDoNotDependOnTheThreadCount()
    {
        QFETCH(QString, mode);
        const Mode m = *valueNamed(modeNames, mode.toStdString());
        std::string digests[2];
        std::int64_t updates[2] = {0, 0};
        for (const int threads : {2, 1}) {
            omp_set_num_threads(threads); // the simulated trainers compute on omp_get_max_threads() threads
            const PreparedRun run = simulatedRun();
            TrainingObserver none;
            const ModeResult r = runMode(run, m, none);
            QVERIFY(!r.diverged);
            digests[threads - 1] = r.paramsDigest;
            updates[threads - 1] = r.updates;
        }
        omp_set_num_threads(2);
        QVERIFY(updates[0] > 0);
        QCOMPARE(updates[1], updates[0]);
        QCOMPARE(digests[1], digests[0]);
    }

    // The modes' knobs change a running simulated trainer from its next update, round or push (the window's live
    // knobs): dc-asgd's lambda set to 0 stops the compensation, backup's B drops that many gradients per update,
    // local-sgd's H sets the samples of a round. Each would fail if reconfigure left the knob as it was.
    void knobsChangeARunningTrainer()
    {
        const PreparedRun run = simulatedRun();
        TrainingObserver none;
        TrainerSettings longer = run.settings;
        longer.sampleBudget = std::numeric_limits<std::int64_t>::max();
        {
            const auto trainer = makeTrainer(run.engine, Mode::DcAsgd, run.problem, longer);
            trainer->run(RunLimits {60, std::numeric_limits<double>::infinity()}, none);
            const std::int64_t compensated = trainer->metrics().costs().compensated;
            QVERIFY(compensated > 0);
            TrainerSettings off = trainer->settings();
            off.dcLambda = 0.0;
            trainer->reconfigure(off);
            const std::int64_t before = trainer->updates();
            trainer->run(RunLimits {60, std::numeric_limits<double>::infinity()}, none);
            QVERIFY(trainer->updates() > before);
            QCOMPARE(trainer->metrics().costs().compensated, compensated);
        }
        {
            TrainerSettings one = longer;
            one.backupWorkers = 1;
            const auto trainer = makeTrainer(run.engine, Mode::Backup, run.problem, one);
            trainer->run(RunLimits {3, std::numeric_limits<double>::infinity()}, none);
            const std::int64_t updates = trainer->updates();
            QCOMPARE(trainer->metrics().costs().droppedGradients, updates);
            TrainerSettings three = trainer->settings();
            three.backupWorkers = 3;
            trainer->reconfigure(three);
            const std::int64_t dropped = trainer->metrics().costs().droppedGradients;
            trainer->run(RunLimits {2, std::numeric_limits<double>::infinity()}, none);
            QVERIFY(trainer->updates() > updates);
            QCOMPARE(trainer->metrics().costs().droppedGradients - dropped, 3 * (trainer->updates() - updates));
        }
        {
            TrainerSettings eight = longer;
            eight.localSteps = 8;
            const auto trainer = makeTrainer(run.engine, Mode::LocalSgd, run.problem, eight);
            trainer->run(RunLimits {1, std::numeric_limits<double>::infinity()}, none);
            QCOMPARE(trainer->samples(), 8LL * run.settings.batch * trainer->updates());
            TrainerSettings two = trainer->settings();
            two.localSteps = 2;
            trainer->reconfigure(two);
            const std::int64_t samples = trainer->samples();
            const std::int64_t rounds = trainer->updates();
            trainer->run(RunLimits {1, std::numeric_limits<double>::infinity()}, none);
            QVERIFY(trainer->updates() > rounds);
            QCOMPARE(trainer->samples() - samples, 2LL * run.settings.batch * (trainer->updates() - rounds));
        }
    }
};

QTEST_GUILESS_MAIN(TestSimThreads)
#include "test_sim_threads.moc"
