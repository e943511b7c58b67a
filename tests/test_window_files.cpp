// The window's files (offscreen): a run folder named on the command line is shown and titled, a finished run's
// folder opens with every update, its accuracy against the mode's seconds, its target and a simulated run's virtual
// seconds, and folders of other modes open into the columns or are refused with the reason; File > Open data trains on
// a CSV file or an IDX folder and a bad one changes nothing; Save run as... writes a run folder that Open run reads
// back; charts of two pairs of modes exported into one folder keep both pairs' files.
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/WindowOptions.h"

#include "ui/charts/AccuracyChart.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <string>

using namespace sgdscope;
using namespace sgdscope::testing;
using namespace sgdscope::ui;

class TestWindowFiles : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        useOwnSettings("test_window_files");
        QVERIFY(m_dir.isValid());
    }

    void runFolderOnTheCommandLine()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        const QString run = m_dir.filePath(QStringLiteral("parabola-run"));
        const Result r = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), run,
            QStringLiteral("--steps"), QStringLiteral("300"), QStringLiteral("--workers"), QStringLiteral("2")});
        QCOMPARE(r.exitCode, 0);
        // Options beside a run folder are refused: the folder is shown as it ran.
        const Result both = runProgram({run, QStringLiteral("--workers"), QStringLiteral("2")});
        QCOMPARE(both.exitCode, 2);
        QVERIFY2(both.err.contains(QStringLiteral("is a finished run, shown as it ran")), qPrintable(both.err));
        // `sgdscope RUN_DIR` on a folder whose summary is broken: the loader's message, exit 2.
        const QString broken = m_dir.filePath(QStringLiteral("broken-run"));
        QDir().mkpath(broken);
        {
            QFile f(QDir(broken).filePath(QStringLiteral("summary.json")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"runs\": 3}");
        }
        const Result bad = runProgram({broken});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(
            bad.err.contains(QStringLiteral("no \"runs\" (is this an sgdscope run folder?)")), qPrintable(bad.err));
        // ... and on a good one the window opens (and stays open until closed).
        {
            QProcess p;
            p.start(QStringLiteral(SGDSCOPE_BINARY), {run});
            QVERIFY(p.waitForStarted());
            QVERIFY2(!p.waitForFinished(3000), qPrintable(QString::fromUtf8(p.readAllStandardError())));
            p.kill();
            p.waitForFinished();
        }
        // What `sgdscope RUN_DIR` does: the folder is shown and titled.
        MainWindow w;
        QCOMPARE(w.openPath(run), QString());
        QCOMPARE(w.windowTitle(), QStringLiteral("sgdscope \u2014 parabola-run (run folder)"));
        QCOMPARE(w.series(LeftColumn).status().updates, 300);
        QVERIFY(!w.series(LeftColumn).points().empty());
        QVERIFY(!w.series(RightColumn).points().empty());
        QVERIFY(MainWindow::recentPaths().contains(QDir(run).absolutePath()));
        // No first look mixes into the folder's charts (one would start 250 ms after a settings change).
        const auto evals = w.series(LeftColumn).evals().size();
        w.panel()->seedBox()->setValue(5);
        QTest::qWait(600);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
        QTest::qWait(100);
        QCOMPARE(w.series(LeftColumn).evals().size(), evals);
        QCOMPARE(w.windowTitle(), QStringLiteral("sgdscope \u2014 parabola-run (run folder)"));
    }

    void openDataTrainsAndABadFileChangesNothing()
    {
        MainWindow w;
        w.controller()->start(); // the parabola
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(LeftColumn).points().empty(), 20000);
        const SessionSettings before = w.controller()->settings();

        // A malformed CSV: the loader's message, and the running session goes on as it was.
        const QString bad = m_dir.filePath(QStringLiteral("bad.csv"));
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("a,b,y\n1,2,3\n4,oops,6\n");
        }
        const QString problem = w.openData(bad);
        QVERIFY2(problem.contains(QStringLiteral("bad.csv")) && problem.contains(QStringLiteral("line 3")),
            qPrintable(problem));
        QCOMPARE(w.controller()->state(), Controller::State::Running);
        QCOMPARE(w.controller()->settings().options, before.options);
        QCOMPARE(w.panel()->presetBox()->currentText(), QStringLiteral("parabola"));
        const auto received = w.series(LeftColumn).received();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).received() > received, 20000);

        // A good one: the model as headless chooses it (the preset's hidden layer, the data's widths); it
        // applies on Reset, and then trains.
        QCOMPARE(w.openData(csvFile), QString());
        QCOMPARE(w.panel()->presetBox()->currentText(), QStringLiteral("data: regression.csv"));
        QVERIFY2(w.panel()->summaryText().contains(QStringLiteral("MLP 2-5-1")), qPrintable(w.panel()->summaryText()));
        w.controller()->reset();
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 50, 20000);
        QVERIFY(std::isfinite(w.series(LeftColumn).status().lastLoss));
        QCOMPARE(
            w.series(LeftColumn).status().samples / w.series(LeftColumn).status().updates, 64); // regression.csv's 64
        QVERIFY(MainWindow::recentPaths().contains(QFileInfo(csvFile).absoluteFilePath()));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void aPresetsBatchLargerThanTheDataIsNotInTheWay()
    {
        // blobs' batch is 256; classes.csv has 40 rows. The command line's batch is what Start uses ...
        const QString classes = QStringLiteral(SGDSCOPE_TEST_DATA "/classes.csv");
        MainWindow w;
        QCOMPARE(
            w.applySettings(windowSettings({{"preset", "blobs"}, {"data", classes.toStdString()}, {"batch", "32"}})),
            QString());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 5, 60000);
        QCOMPARE(w.series(LeftColumn).status().samples, 32 * w.series(LeftColumn).status().updates);
        QCOMPARE(w.controller()->state(), Controller::State::Running);
        w.controller()->reset();
        // ... and File > Open data under that preset takes the whole set.
        QCOMPARE(w.openData(classes), QString());
        QCOMPARE(w.panel()->settings().batch, 40);
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 5, 60000);
        QCOMPARE(w.series(LeftColumn).status().samples, 40 * w.series(LeftColumn).status().updates);
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void openDataOnAnIdxFolder()
    {
        // Debian's Fashion-MNIST folder read as IDX data, under the parabola preset: its labels are classes, so
        // the preset's mse gives way to cross-entropy, and the model takes the data's widths.
        const QString folder = QStringLiteral("/usr/share/datasets/fashion-mnist");
        if (!QFileInfo::exists(folder + QStringLiteral("/train-labels-idx1-ubyte.gz")))
            QSKIP("dataset-fashion-mnist is not installed (scripts/setup.sh installs it)");
        MainWindow w;
        QCOMPARE(w.openData(folder), QString());
        QCOMPARE(w.panel()->presetBox()->currentText(), QStringLiteral("data: fashion-mnist"));
        QVERIFY2(w.panel()->summaryText().contains(QStringLiteral("MLP 784-5-10 tanh, cross-entropy")),
            qPrintable(w.panel()->summaryText()));
        // The first look has a held-out test set: its accuracy is there before Start.
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(LeftColumn).evals().empty(), 60000);
        QVERIFY(w.series(LeftColumn).evals().front().hasTest);
        QVERIFY(w.series(LeftColumn).evals().front().testAccuracy >= 0);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 60000);
    }

    void saveRunAsRoundTripsThroughOpenRun()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"preset", "parabola"}, {"workers", "2"}})), QString());
        QVERIFY(!w.saveRun(m_dir.filePath(QStringLiteral("too-early"))).isEmpty()); // nothing trained yet
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(
            w.series(LeftColumn).evals().size() > 1 && w.series(RightColumn).evals().size() > 1, 60000);
        w.controller()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->digest(LeftColumn).isEmpty(), 10000);
        QTest::qWait(200);
        const QString folder = m_dir.filePath(QStringLiteral("saved"));
        QCOMPARE(w.saveRun(folder), QString());
        for (const char* file :
            {"summary.json", "metrics.csv", "loss.png", "idle.png", "staleness.png", "comparison.png"})
            QVERIFY2(QFile::exists(QDir(folder).filePath(QString::fromLatin1(file))), file);
        const Json summary = readJson(folder + QStringLiteral("/summary.json"));
        QCOMPARE(summary.at("config").at("workers").get<int>(), 2);
        QCOMPARE(QString::fromStdString(summary.at("runs").at(0).at("params_digest").get<std::string>()),
            w.controller()->digest(LeftColumn));

        MainWindow other;
        QCOMPARE(other.openRun(folder), QString());
        for (const int m : {LeftColumn, RightColumn}) {
            const auto& saved = w.series(m);
            const auto& opened = other.series(m);
            QCOMPARE(opened.points().size(), saved.points().size());
            QCOMPARE(opened.evals().size(), saved.evals().size());
            for (std::size_t i = 0; i < saved.points().size(); ++i) {
                QCOMPARE(opened.points()[i].index, saved.points()[i].index);
                QCOMPARE(opened.points()[i].samples, saved.points()[i].samples);
                QCOMPARE(opened.points()[i].loss, saved.points()[i].loss);
                QCOMPARE(opened.points()[i].seconds, saved.points()[i].seconds);
                QCOMPARE(opened.points()[i].staleness, saved.points()[i].staleness);
            }
            for (std::size_t i = 0; i < saved.evals().size(); ++i) {
                QCOMPARE(opened.evals()[i].index, saved.evals()[i].index);
                QCOMPARE(opened.evals()[i].loss, saved.evals()[i].loss);
            }
            QCOMPARE(opened.status().updates, saved.status().updates);
            QCOMPARE(opened.status().samples, saved.status().samples);
            QCOMPARE(opened.status().workers.size(), saved.status().workers.size());
        }
        // A folder that holds other files is not written into.
        const QString busy = m_dir.filePath(QStringLiteral("busy"));
        QDir().mkpath(busy);
        QFile(QDir(busy).filePath(QStringLiteral("mine.txt"))).open(QIODevice::WriteOnly);
        QVERIFY(w.saveRun(busy).contains(QStringLiteral("exists; save into a new or empty folder")));
        QVERIFY(!QFile::exists(QDir(busy).filePath(QStringLiteral("summary.json"))));
        QVERIFY(w.saveRun(folder).contains(QStringLiteral("exists"))); // not over a run either
        // Nothing of a save is left beside the folders (it is written beside them, then renamed).
        QCOMPARE(
            QDir(m_dir.path()).entryList({QStringLiteral(".*saving*")}, QDir::AllEntries | QDir::Hidden).size(), 0);
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void openRunShowsAFinishedRunFolder()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        QTemporaryDir dir;
        const Result p = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), dir.path(),
            QStringLiteral("--preset"), QStringLiteral("blobs"), QStringLiteral("--workers"), QStringLiteral("3"),
            QStringLiteral("--steps"), QStringLiteral("40")});
        QCOMPARE(p.exitCode, 0);
        MainWindow w;
        w.show();
        QCOMPARE(w.openRun(dir.path()), QString());
        for (int m = 0; m < modeCount; ++m) {
            // Every update (async: every push, each a worker's slice of the batch) is in metrics.csv.
            QCOMPARE(static_cast<std::int64_t>(w.series(m).points().size()), w.series(m).status().updates);
            QVERIFY(w.series(m).status().updates >= 40 * (m == LeftColumn ? 1 : 3));
            QVERIFY(!w.series(m).evals().empty());
            QVERIFY(w.series(m).status().valid);
            QCOMPARE(static_cast<int>(w.series(m).status().workers.size()), 3);
            QVERIFY(w.column(m)->lossChart()->rawPointCount(0) > 0);
        }
        QVERIFY(w.series(RightColumn).status().meanStaleness > 0);
        QVERIFY(!w.series(LeftColumn).status().virtualClock);
        // The accuracy chart draws every evaluation's held-out accuracy (blobs has a generated test set) against
        // the mode's seconds; no target was set, so no target line.
        for (int m = 0; m < modeCount; ++m) {
            QList<QPointF> expected;
            for (const EvalPoint& e : w.series(m).evals())
                if (e.hasTest && e.testAccuracy >= 0)
                    expected.append(QPointF(e.seconds, e.testAccuracy));
            QVERIFY(!expected.isEmpty());
            QCOMPARE(w.accuracyChart()->linePoints(m), expected);
        }
        QVERIFY2(w.accuracyChart()->chartItem()->title().contains(QStringLiteral("test set accuracy")),
            qPrintable(w.accuracyChart()->chartItem()->title()));
        QVERIFY(std::isnan(w.accuracyChart()->targetDrawn()));
        // A run with a target: the folder's own target is drawn and reported.
        QTemporaryDir targetDir;
        const Result withTarget = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), targetDir.path(),
            QStringLiteral("--preset"), QStringLiteral("blobs"), QStringLiteral("--steps"), QStringLiteral("40"),
            QStringLiteral("--target-accuracy"), QStringLiteral("0.5")});
        QCOMPARE(withTarget.exitCode, 0);
        QCOMPARE(w.openRun(targetDir.path()), QString());
        QCOMPARE(w.accuracyChart()->targetDrawn(), 0.5);
        for (int m = 0; m < modeCount; ++m) {
            QCOMPARE(w.series(m).status().targetAccuracy, 0.5);
            QVERIFY(w.series(m).status().targetReached);
        }
        // A simulated run's folder: its virtual seconds are read as such.
        QTemporaryDir simDir;
        const Result sim = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), simDir.path(),
            QStringLiteral("--preset"), QStringLiteral("blobs"), QStringLiteral("--engine"), QStringLiteral("sim"),
            QStringLiteral("--workers"), QStringLiteral("16"), QStringLiteral("--steps"), QStringLiteral("20")});
        QCOMPARE(sim.exitCode, 0);
        QCOMPARE(w.openRun(simDir.path()), QString());
        for (int m = 0; m < modeCount; ++m) {
            QVERIFY(w.series(m).status().virtualClock);
            QCOMPARE(static_cast<std::int64_t>(w.series(m).points().size()), w.series(m).status().updates);
            QCOMPARE(static_cast<int>(w.series(m).status().workers.size()), 16);
            QVERIFY(w.series(m).points().back().seconds > 0);
        }
        QVERIFY2(w.accuracyChart()->xAxisTitle().contains(QStringLiteral("virtual")),
            qPrintable(w.accuracyChart()->xAxisTitle()));
        // Not a run folder: the message names the file.
        QTemporaryDir empty;
        QVERIFY(w.openRun(empty.path()).contains(QStringLiteral("summary.json")));
    }

    // A headless run folder of any two modes opens into the columns; one of more modes than columns is refused.
    void headlessRunFoldersOfOtherModesOpen()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        const QString two = m_dir.filePath(QStringLiteral("headless-local-dc"));
        Result r = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), two, QStringLiteral("--mode"),
            QStringLiteral("local-sgd,dc-asgd"), QStringLiteral("--workers"), QStringLiteral("2"),
            QStringLiteral("--steps"), QStringLiteral("40")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        MainWindow w;
        QCOMPARE(w.openRun(two), QString());
        QCOMPARE(w.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("Local SGD"));
        QCOMPARE(w.column(RightColumn)->modeBox()->currentText(), QStringLiteral("DC-ASGD"));
        QCOMPARE(w.column(LeftColumn)->histogram()->title(), QStringLiteral("Local SGD wait per update"));
        QCOMPARE(w.column(RightColumn)->histogram()->title(), QStringLiteral("DC-ASGD staleness"));
        QVERIFY(!w.series(LeftColumn).points().empty());
        QVERIFY(!w.series(RightColumn).points().empty());
        const QString three = m_dir.filePath(QStringLiteral("headless-three"));
        r = runProgram({QStringLiteral("--headless"), QStringLiteral("--out"), three, QStringLiteral("--mode"),
            QStringLiteral("sync,async,ssp"), QStringLiteral("--steps"), QStringLiteral("20")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString refused = w.openRun(three);
        QVERIFY2(refused.contains(QStringLiteral("the folder holds 3 runs (sync,async,ssp)")), qPrintable(refused));
    }

    // Charts exported from sync | async and then from ssp | backup into one folder keep both pairs' files: the
    // comparisons and the window are named after the modes (window.png stays sync | async's).
    void exportsOfTwoPairsShareAFolder()
    {
        MainWindow w;
        w.resize(1000, 700);
        QTemporaryDir dir;
        QVERIFY(w.exportCharts(dir.path()).isEmpty());
        const auto first = w.exportables().size() + 1;
        emit w.column(LeftColumn)
            ->modeBox()
            ->activated(w.column(LeftColumn)->modeBox()->findData(QStringLiteral("ssp")));
        emit w.column(RightColumn)
            ->modeBox()
            ->activated(w.column(RightColumn)->modeBox()->findData(QStringLiteral("backup")));
        QCOMPARE(w.column(RightColumn)->shownMode(), QStringLiteral("backup")); // idle: shown at once
        QCOMPARE(w.windowExportName(), QStringLiteral("ssp-vs-backup-window.png"));
        QVERIFY(w.exportCharts(dir.path()).isEmpty());
        const QStringList files = QDir(dir.path()).entryList({QStringLiteral("*.png")});
        QCOMPARE(files.size(), first + w.exportables().size() + 1);
        for (const char* name : {"window.png", "sync-vs-async-loss-samples.png", "sync-vs-async-loss-seconds.png",
                 "sync-vs-async-accuracy.png", "ssp-vs-backup-window.png", "ssp-vs-backup-loss-samples.png",
                 "ssp-vs-backup-loss-seconds.png", "ssp-vs-backup-accuracy.png", "ssp-loss.png", "sync-loss.png"})
            QVERIFY2(files.contains(QString::fromUtf8(name)), name);
    }

    // A folder of two runs of one mode cannot fill two columns of different modes: refused with the reason.
    void aFolderOfOneModeTwiceIsRefused()
    {
        const QString folder = m_dir.filePath(QStringLiteral("sync-twice"));
        QVERIFY(QDir().mkpath(folder));
        QFile summary(folder + QStringLiteral("/summary.json"));
        QVERIFY(summary.open(QIODevice::WriteOnly));
        summary.write(R"({"runs": [{"mode": "sync"}, {"mode": "sync"}]})");
        summary.close();
        MainWindow w;
        const QString refused = w.openRun(folder);
        QVERIFY2(refused.contains(QStringLiteral("the folder holds two runs of sync")), qPrintable(refused));
        QCOMPARE(w.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("Sync")); // nothing changed
        QCOMPARE(w.column(RightColumn)->modeBox()->currentText(), QStringLiteral("Async"));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestWindowFiles)
#include "test_window_files.moc"
