// Runs in other processes, shown in the window (offscreen): a simulated cluster runs in a child process, takes live
// changes past the threads engine's worker count, pauses and ends with a reset; an MPI job streams into the window
// and a pause ends it cleanly with its run's files written.
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/charts/LossChart.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace sgdscope::testing;
using namespace sgdscope::ui;

class TestWindowChildRuns : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { useOwnSettings("test_window_child_runs"); }

    void simulatedClusterRunsInAChildAndTakesLiveChanges()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        w.show();
        w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
        SessionSettings s = w.panel()->settings();
        s.preset = QStringLiteral("parabola");
        s.engine = QStringLiteral("sim");
        s.cluster = QStringLiteral("ideal");
        s.platformFile.clear();
        s.workers = 8;
        s.batch = 0;
        s.learningRate = 0.001;
        s.slowWorker = -1;
        w.panel()->setSettings(s);
        QCOMPARE(w.panel()->settings().engine, QStringLiteral("sim"));
        QCOMPARE(w.panel()->settings().workers, 8);
        w.controller()->setSettings(w.panel()->settings());
        w.controller()->start();
        QTRY_VERIFY2_WITH_TIMEOUT(!w.series(LeftColumn).points().empty() && !w.series(RightColumn).points().empty(),
            qPrintable(w.lastError()), 30000);
        QVERIFY(w.series(LeftColumn).status().virtualClock);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(LeftColumn).status().workers.size()), 8, 10000);
        // Past the threads engine's 32: the slider offers 1,024 in the simulated engine.
        s = w.panel()->settings();
        s.workers = 256;
        w.panel()->setSettings(s);
        QCOMPARE(w.panel()->settings().workers, 256);
        w.controller()->setSettings(w.panel()->settings());
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(LeftColumn).status().workers.size()), 256, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(RightColumn).status().workers.size()), 256, 20000);
        QTRY_VERIFY(w.column(LeftColumn)->lossChart()->markerLineCount() > 0);
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        // Pause stops the points; Reset ends the child.
        w.controller()->pause();
        // The slice in flight still ends and sends its points, late on a busy machine (there a starved child
        // went quiet for over half a second, then sent 32 more): wait until nothing has come for 2 s (while
        // running, points come every few milliseconds), then no more may come.
        std::int64_t paused = w.series(LeftColumn).received();
        for (int quietFor = 0, i = 0; quietFor < 4 && i < 60; ++i) {
            QTest::qWait(500);
            const std::int64_t now = w.series(LeftColumn).received();
            quietFor = now == paused ? quietFor + 1 : 0;
            paused = now;
        }
        QTest::qWait(1000);
        QCOMPARE(w.series(LeftColumn).received(), paused);
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 10000);
    }

    void mpiJobStreamsIntoTheWindowAndStops()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        // Under AddressSanitizer: Open MPI leaks at MPI_Finalize (in plugins it has unloaded by then, so no
        // suppression can name them); the ranks' leak check is off, everything else stays on.
        if (qEnvironmentVariableIsSet("ASAN_OPTIONS"))
            qputenv("ASAN_OPTIONS", qgetenv("ASAN_OPTIONS") + ":detect_leaks=0");
        MainWindow w;
        w.show();
        w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
        SessionSettings s = w.panel()->settings();
        s.preset = QStringLiteral("blobs");
        s.engine = QStringLiteral("mpi");
        s.hostFile.clear();
        s.workers = 3;
        s.batch = 0;
        s.learningRate = 0;
        s.slowWorker = -1;
        w.panel()->setSettings(s);
        w.controller()->setSettings(w.panel()->settings());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).points().size() > 10, 30000);
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(LeftColumn).status().workers.size()), 3, 10000);
        const QString folder = w.controller()->runFolder();
        QVERIFY(!folder.isEmpty());
        // Pause ends an MPI job cleanly: every process finishes, rank 0 writes the run's files.
        w.controller()->pause();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->state(), Controller::State::Finished, 15000);
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        QVERIFY(QFile::exists(folder + QStringLiteral("/summary.json")));
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 10000);
        QDir(folder).removeRecursively();
    }
};

QTEST_MAIN(TestWindowChildRuns)
#include "test_window_child_runs.moc"
