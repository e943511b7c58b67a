// What the window's session trains (offscreen): the first look shows the initial loss before Start, as the run's
// own state at 0, and takes what headless would (a simulated backup beyond the threads engine's workers); a batch
// per worker grows with the workers while running; sync's wait is called sync overhead where it is.
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"
#include "ui/charts/WorkerBarsChart.h"

#include <QCheckBox>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace sgdscope;
using namespace sgdscope::testing;
using namespace sgdscope::ui;

class TestWindowSession : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { useOwnSettings("test_window_session"); }

    // The first look draws the initial parameters on at most the threads engine's 256 workers: a simulated backup
    // of 512 workers with B = 300, which headless runs, is not refused as 300 of 256.
    void firstLookTakesASimulatedBackupBeyondTheThreadsWorkers()
    {
        const SessionSettings s = windowSettings({{"engine", "sim"}, {"workers", "512"}, {"mode", "sync,backup"},
            {"backup-workers", "300"}, {"batch", "1024"}, {"preset", "blobs"}});
        QCOMPARE(s.modes.backupWorkers, 300);
        QCOMPARE(headlessConfig(s, 10).backupWorkers, 300); // what headless takes
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        QCOMPARE(w.panel()->settings().modes.backupWorkers, 300);
        QCOMPARE(w.column(RightColumn)->knobBox()->value(), 300);
        // B must still leave one gradient of the 512.
        SessionSettings all = s;
        all.modes.backupWorkers = 512;
        const MetricsBatch refused = previewSession(std::make_shared<DataCache>(), all, true);
        QVERIFY2(
            refused.error.contains(QStringLiteral("512 is not allowed with 512 workers")), qPrintable(refused.error));
    }

    void firstLookShowsTheInitialLossBeforeStart()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"preset", "parabola"}, {"seed", "3"}})), QString());
        QTRY_VERIFY_WITH_TIMEOUT(
            !w.series(LeftColumn).evals().empty() && !w.series(RightColumn).evals().empty(), 20000);
        QCOMPARE(w.controller()->state(), Controller::State::Idle);
        const EvalPoint first = w.series(LeftColumn).evals().front();
        QCOMPARE(first.index, 0);
        QVERIFY(std::isfinite(first.loss) && first.loss > 0);
        QCOMPARE(w.series(RightColumn).evals().front().loss, first.loss);
        QVERIFY(w.series(LeftColumn).points().empty());
        // It is the run's own state at 0: Start's first evaluation is the same number.
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(LeftColumn).evals().empty() && w.series(LeftColumn).status().valid, 20000);
        QCOMPARE(w.series(LeftColumn).evals().front().index, 0);
        QCOMPARE(w.series(LeftColumn).evals().front().loss, first.loss);
        // Another seed, another first look, which replaces the one before (typing 4, then 45, is one look).
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.series(LeftColumn).evals().size(), std::size_t {1}, 20000);
        QTest::qWait(100); // (the reset's own first look has been shown)
        QSignalSpy looks(w.controller(), &Controller::metricsReady); // idle: only first looks send metrics
        w.panel()->seedBox()->setValue(4);
        w.panel()->seedBox()->setValue(45);
        QTest::qWait(600);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
        QTest::qWait(100);
        QCOMPARE(looks.count(), 1);
        QCOMPARE(w.series(LeftColumn).evals().size(), std::size_t {1});
        // ... and it is seed 45's, taken on its own.
        SessionSettings seed45 = w.panel()->settings();
        QCOMPARE(seed45.seed, std::uint64_t {45});
        const MetricsBatch alone = previewSession(std::make_shared<DataCache>(), seed45);
        QCOMPARE(w.series(LeftColumn).evals().front().loss, alone.evals[LeftColumn].front().loss);
        QVERIFY(w.series(LeftColumn).evals().front().loss != first.loss);
        // A first look that fails says why Start would fail, and keeps no old points.
        SessionSettings bad = w.panel()->settings();
        bad.options.append({QStringLiteral("slow"), QStringLiteral("5:2")}); // with 2 workers
        w.panel()->setSettings(bad);
        w.controller()->setSettings(w.panel()->settings());
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).evals().empty(), 20000);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // The first screen says what sync's wait is made of: on the simulated datacenter a parabola's compute is
    // nanoseconds and each update waits for the wires, so the status bar and the worker chart call the wait
    // sync overhead; with an 8x straggler the wait is the straggler's and neither says so. (Virtual time: the
    // same reading on any machine, however busy.)
    void syncOverheadIsSaidAsSuch()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        for (const bool straggler : {false, true}) {
            MainWindow w;
            w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
            std::vector<std::pair<std::string, std::string>> options = {{"engine", "sim"}, {"cluster", "datacenter"},
                {"workers", "4"}, {"preset", "parabola"}, {"mode", "sync,async"}};
            if (straggler)
                options.push_back({"slow", "1:8"});
            QCOMPARE(w.applySettings(windowSettings(options)), QString());
            w.controller()->start();
            QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 50, 60000);
            QTRY_VERIFY_WITH_TIMEOUT(w.statusLabel(LeftColumn)->text().contains(QStringLiteral("wait")), 10000);
            const QString status = w.statusLabel(LeftColumn)->text();
            w.refreshCharts(); // (a hidden window's charts refresh when asked)
            const QString title = w.column(LeftColumn)->workerChart()->title();
            QCOMPARE(status.contains(QStringLiteral("(sync overhead)")), !straggler);
            const QString tip = w.statusLabel(LeftColumn)->toolTip();
            QVERIFY2(tip.contains(QStringLiteral("not a straggler's")) != straggler, qPrintable(tip));
            QCOMPARE(
                title, straggler ? QStringLiteral("Sync worker time") : QStringLiteral("Sync idle is sync overhead"));
            w.controller()->reset();
            QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
        }
    }

    void batchPerWorkerGrowsWithTheWorkers()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"batch-per-worker", "4"}, {"workers", "3"}})), QString());
        QVERIFY(w.panel()->perWorkerBox()->isChecked());
        QCOMPARE(w.panel()->settings().globalBatch(), 12);
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 20, 20000);
        QCOMPARE(w.series(LeftColumn).status().samples, 12 * w.series(LeftColumn).status().updates);
        // The slider offers per-worker batches up to each worker's share of the data (50 / 3 = 16).
        QCOMPARE(w.panel()->batchSlider()->maximum() + 1, 5); // 1, 2, 4, 8, 16
        w.panel()->batchSlider()->setValue(w.panel()->batchSlider()->maximum());
        QCOMPARE(w.panel()->settings().batch, 16);
        w.panel()->batchSlider()->setValue(2);
        QCOMPARE(w.panel()->settings().batch, 4);
        // More workers, a larger batch: every worker keeps its 4 samples.
        w.panel()->workersSlider()->setValue(5);
        QCOMPARE(w.controller()->runningSettings().globalBatch(), 20);
        // Every change the session applies leaves a marker; on a busy machine the slider's moves may reach it one
        // by one (measured: 86 updates of 12 samples after the first marker): the marker of the 5 workers.
        Marker change;
        QTRY_VERIFY_WITH_TIMEOUT(
            std::any_of(w.series(LeftColumn).markers().begin(), w.series(LeftColumn).markers().end(),
                [&](const Marker& m) {
                    change = m;
                    return m.text.startsWith(QStringLiteral("P=5 "));
                }),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > change.index + 20, 20000);
        const ModeStatus& now = w.series(LeftColumn).status();
        QCOMPARE(now.samples - change.samples, 20 * (now.updates - change.index));
        // At 16 workers each worker's share is 50 / 16 = 3 samples: the batch per worker becomes 3, the largest
        // allowed, on the slider for the user to see (not cut silently inside the run).
        w.panel()->workersSlider()->setValue(16);
        QCOMPARE(w.panel()->settings().batch, 3);
        QCOMPARE(w.controller()->runningSettings().globalBatch(), 48);
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }
};

QTEST_MAIN(TestWindowSession)
#include "test_window_session.moc"
