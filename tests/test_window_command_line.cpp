// The window's command line, in and out (offscreen): run options on its command line and in a config file set the
// panel and are refused with the reason where they cannot apply; Run > Copy command line gives the window's sync
// parameters bit for bit, on threads and on a simulated cluster.
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/WindowOptions.h"

#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QProcess>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include <string>

using namespace sgdscope;
using namespace sgdscope::testing;
using namespace sgdscope::ui;

class TestWindowCommandLine : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        useOwnSettings("test_window_command_line");
        QVERIFY(m_dir.isValid());
    }

    void commandLineSetsThePanel()
    {
        const SessionSettings s = windowSettings({{"data", csvFile.toStdString()}, {"layers", "2,16,1"},
            {"momentum", "0.5"}, {"workers", "8"}, {"batch", "24"}, {"lr", "0.03"}, {"accum", "2"}, {"slow", "1:3"},
            {"jitter", "0.3"}, {"seed", "7"}, {"async-apply", "lockfree"}, {"target-loss", "0.5"}});
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        const SessionSettings read = w.panel()->settings();
        QCOMPARE(read.workers, 8);
        QCOMPARE(read.batch, 24); // not a power of two: a slider position of its own
        QCOMPARE(read.learningRate, 0.03); // exactly: the slider's steps would give 0.0316
        QCOMPARE(read.accum, 2);
        QCOMPARE(read.slowWorker, 1);
        QCOMPARE(read.slowFactor, 3.0);
        QCOMPARE(read.jitter, 0.3);
        QCOMPARE(read.seed, std::uint64_t {7});
        QVERIFY(read.lockFree);
        QCOMPARE(read.targetLoss, 0.5);
        QCOMPARE(w.panel()->presetBox()->currentText(), QStringLiteral("data: regression.csv"));
        // Settings without a control of their own are shown, and the model as it will be built.
        QVERIFY2(
            w.panel()->optionsText().contains(QStringLiteral("--layers 2,16,1")), qPrintable(w.panel()->optionsText()));
        QVERIFY(w.panel()->optionsText().contains(QStringLiteral("--momentum 0.5")));
        QVERIFY2(
            w.panel()->summaryText().contains(QStringLiteral("MLP 2-16-1 tanh")), qPrintable(w.panel()->summaryText()));
        QVERIFY(w.windowTitle().contains(QStringLiteral("data: regression.csv \u00b7 8 workers \u00b7 threads")));
        // ... and kept across Reset, and across a run.
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(LeftColumn).points().empty(), 20000);
        w.controller()->reset();
        QCOMPARE(w.panel()->settings().options, s.options);
        QCOMPARE(w.controller()->settings().options, s.options);
        // Another preset from the box brings its own model and data.
        w.panel()->presetBox()->setCurrentIndex(w.panel()->presetBox()->findText(QStringLiteral("blobs")));
        QVERIFY(w.panel()->settings().option(QStringLiteral("data")).isEmpty());
        QVERIFY(w.panel()->settings().option(QStringLiteral("layers")).isEmpty());
        QCOMPARE(w.panel()->presetBox()->findText(QStringLiteral("data: regression.csv")), -1);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void simulatedClusterFromTheCommandLine()
    {
        const SessionSettings s = windowSettings({{"engine", "sim"}, {"cluster", "wan"}, {"workers", "256"},
            {"preset", "blobs"}, {"rotating-straggler", "4"}, {"slow", "1:2"}, {"slow", "200:3"}});
        QCOMPARE(s.engine, QStringLiteral("sim"));
        QCOMPARE(s.cluster, QStringLiteral("wan"));
        QCOMPARE(s.workers, 256);
        QCOMPARE(s.option(QStringLiteral("rotating-straggler")), QStringLiteral("4"));
        // The simulated engine's slider ends at 1,024 workers; headless goes further.
        const QString tooMany = refusalOf({{"engine", "sim"}, {"workers", "2048"}});
        QVERIFY2(
            tooMany.contains(QStringLiteral("--workers: 2048 is more than the window offers on the sim engine (1024)")),
            qPrintable(tooMany));
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        QCOMPARE(w.panel()->engineBox()->currentData().toString(), QStringLiteral("sim"));
        QCOMPARE(w.panel()->clusterBox()->currentData().toString(), QStringLiteral("wan"));
        QCOMPARE(w.panel()->settings().workers, 256);
        // Two stragglers: no control takes both, so both are run options, and the model line is the preset's.
        QCOMPARE(
            w.panel()->optionsText(), QStringLiteral("--rotating-straggler 4 \u00b7 --slow 1:2 \u00b7 --slow 200:3"));
        QVERIFY2(w.panel()->summaryText().startsWith(QStringLiteral("blobs: MLP 64-256-256-10")),
            qPrintable(w.panel()->summaryText()));
        QCOMPARE(w.windowTitle(), QStringLiteral("sgdscope \u2014 blobs \u00b7 256 workers \u00b7 simulated wan"));
    }

    // A convolutional model: the preset's model line, or the command line's, as it will be built.
    void convolutionalModelLine()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"preset", "fashion-cnn"}})), QString());
        QVERIFY2(w.panel()->summaryText().startsWith(QStringLiteral(
                     "fashion-mnist: conv6x5x5p2,maxpool2,conv16x5x5,maxpool2,dense120,dense84,dense10 relu, "
                     "cross-entropy")),
            qPrintable(w.panel()->summaryText()));
        MainWindow mine;
        QCOMPARE(mine.applySettings(windowSettings(
                     {{"preset", "fashion-cnn"}, {"model", "conv4x5x5,avgpool2,tanh,dense10"}, {"momentum", "0.5"}})),
            QString());
        QVERIFY2(mine.panel()->optionsText().contains(QStringLiteral("--model conv4x5x5,avgpool2,tanh,dense10")),
            qPrintable(mine.panel()->optionsText()));
        QVERIFY2(mine.panel()->summaryText().startsWith(
                     QStringLiteral("fashion-mnist: conv4x5x5,avgpool2,tanh,dense10, cross-entropy, momentum 0.5")),
            qPrintable(mine.panel()->summaryText()));
        // A model line that does not parse is refused before the window opens, naming the layer.
        const QString refused = refusalOf({{"preset", "fashion-cnn"}, {"model", "conv4x5x5,maxpool,dense10"}});
        QVERIFY2(
            refused.startsWith(QStringLiteral("--model: layer 2 'maxpool': a pool is maxpoolK")), qPrintable(refused));
    }

    void configFileAsOnTheCommandLine()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        // A list is one option's items ("layers": [2, 16, 1] is --layers 2,16,1), a repeatable option's list
        // is the option given once per item; the command line overrides the file.
        const std::string config = "{\"data\": \"" + csvFile.toStdString()
            + "\", \"layers\": [2, 16, 1], \"slow\": [\"0:2\", \"1:3\"], \"workers\": 4, \"lr\": 0.5}";
        const SessionSettings s = windowSettings({{"lr", "0.02"}}, &config, "c.json");
        QCOMPARE(s.option(QStringLiteral("layers")), QStringLiteral("2,16,1"));
        QCOMPARE(s.workers, 4);
        QCOMPARE(s.learningRate, 0.02);
        int slow = 0;
        for (const auto& [name, value] : s.options)
            slow += name == QStringLiteral("slow") ? 1 : 0;
        QCOMPARE(slow, 2);
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        QVERIFY2(w.panel()->summaryText().contains(QStringLiteral("MLP 2-16-1")), qPrintable(w.panel()->summaryText()));
        // The copied command of such a session is a valid headless command (its --slow twice, --layers once).
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 5, 60000);
        w.controller()->pause();
        QStringList args = QProcess::splitCommand(w.controller()->reproducingCommand());
        args.removeFirst();
        args[args.indexOf(QStringLiteral("--out")) + 1] = m_dir.filePath(QStringLiteral("from-config"));
        const Result r = runProgram(args);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
        // A field that cannot apply to a window is named as the file's.
        const std::string out = "{\"out\": \"x\"}";
        try {
            (void)windowSettings({}, &out, "c.json");
            QFAIL("--out in a config file was taken");
        } catch (const SgdError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).startsWith(QStringLiteral("field \"out\" of config file 'c.json'")),
                e.what());
        }
    }

    void badOptionsAreRefusedWithTheReason_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("needle");
        auto row = [](const char* tag, const QStringList& args, const char* needle) {
            QTest::newRow(tag) << args << QString::fromUtf8(needle);
        };
        row("out", {QStringLiteral("--out"), QStringLiteral("x")}, "--out: the window shows its results");
        row("steps", {QStringLiteral("--steps"), QStringLiteral("5")}, "--steps: the window trains until you pause");
        row("lr-schedule", {QStringLiteral("--lr-schedule"), QStringLiteral("linear")},
            "--lr-schedule: the window trains until you pause or reset, so it has no run's end");
        // One mode alone has no second column: the message says what the window takes.
        row("one-mode", {QStringLiteral("--mode"), QStringLiteral("sync")},
            "--mode: the window shows two modes side by side, one per column, and sync is 1 mode; give two");
        row("three-modes", {QStringLiteral("--mode"), QStringLiteral("sync,async,ssp")},
            "--mode: the window shows two modes side by side, one per column, and sync,async,ssp is 3 modes");
        row("same-mode-twice", {QStringLiteral("--mode"), QStringLiteral("ssp,ssp")},
            "--mode: mode ssp is listed twice");
        row("knob-of-a-mode-not-shown", {QStringLiteral("--ssp-bound"), QStringLiteral("5")},
            "--ssp-bound: applies to the ssp mode only, but --mode is sync,async");
        row("backup-workers-not-below-the-workers",
            {QStringLiteral("--mode"), QStringLiteral("sync,backup"), QStringLiteral("--workers"), QStringLiteral("2"),
                QStringLiteral("--backup-workers"), QStringLiteral("2")},
            "--backup-workers: 2 is not allowed with 2 workers; use 0 to 1");
        row("ssp-bound-beyond-the-box",
            {QStringLiteral("--mode"), QStringLiteral("sync,ssp"), QStringLiteral("--ssp-bound"),
                QStringLiteral("5000")},
            "--ssp-bound: 5000 is outside what the window's control offers (0 to 1000)");
        row("progress", {QStringLiteral("--progress"), QStringLiteral("-")}, "--progress: streams a headless run");
        row("workers", {QStringLiteral("--workers"), QStringLiteral("64")},
            "--workers: 64 is more than the window offers");
        row("lr", {QStringLiteral("--lr"), QStringLiteral("3")}, "--lr: 3 is outside what the window's control offers");
        row("value", {QStringLiteral("--workers"), QStringLiteral("0")}, "--workers: '0' is not allowed");
        row("unknown", {QStringLiteral("--speed"), QStringLiteral("9")}, "--speed: unknown option");
        row("inapplicable", {QStringLiteral("--peer-timeout"), QStringLiteral("9")}, "--peer-timeout: applies to MPI");
        row("per-worker-and-batch",
            {QStringLiteral("--batch"), QStringLiteral("8"), QStringLiteral("--batch-per-worker"), QStringLiteral("4")},
            "--batch-per-worker: cannot be combined with --batch");
        row("missing-path", {QStringLiteral("/nonexistent/run")}, "'/nonexistent/run' does not exist");
        row("layers-that-do-not-fit", {csvFile, QStringLiteral("--layers"), QStringLiteral("3,1")},
            "--layers: the first width is 3 but csv has 2");
        row("batch-larger-than-the-data", {csvFile, QStringLiteral("--batch"), QStringLiteral("100")},
            "--batch: 100 is larger than the training set (64 samples of csv)");
        row("per-worker-batch-larger-than-the-data",
            {QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--batch-per-worker"),
                QStringLiteral("30")},
            "--batch-per-worker 30 x 2 workers: 60 is larger than the training set (50 samples of parabola)");
        row("accum-beyond-the-chunks",
            {QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--batch"), QStringLiteral("24"),
                QStringLiteral("--accum"), QStringLiteral("16")},
            "--accum: 16 micro-batches per worker need at least 16 chunks per worker");
        row("two-paths", {csvFile, csvFile}, "the window opens one run folder or data set at a time");
        row("platform-too-small",
            {QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--platform"),
                QStringLiteral(SGDSCOPE_TEST_DATA "/cluster-4hosts.xml"), QStringLiteral("--workers"),
                QStringLiteral("8")},
            "--platform: it has 4 hosts, and 8 workers and a parameter server need 9 with --placement spread");
    }

    void badOptionsAreRefusedWithTheReason()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        QFETCH(QStringList, args);
        QFETCH(QString, needle);
        // The program, as a user runs it: refused before any window opens (no display needed), exit 2, one line.
        const Result r = runProgram(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(needle), qPrintable(r.err));
        QCOMPARE(r.err.trimmed().count(QLatin1Char('\n')), 0);
    }

    void copiedCommandLineGivesTheWindowsSyncBits()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        SessionSettings s = windowSettings({{"workers", "3"}, {"accum", "2"}, {"lr", "0.02"}, {"slow", "2:2"}});
        QCOMPARE(w.applySettings(s), QString());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 30, 60000);
        // A live change is not in the command line, and it says so.
        w.panel()->jitterSlider()->setValue(2);
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(LeftColumn).markers().empty(), 10000);
        w.controller()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->digest(LeftColumn).isEmpty(), 10000);
        const QString said = w.copyCommandLine();
        QVERIFY2(said.contains(QStringLiteral("1 live change")), qPrintable(said));
        const QString command = QGuiApplication::clipboard()->text();
        QVERIFY2(
            command.startsWith(QStringLiteral("sgdscope --headless --out run --preset parabola")), qPrintable(command));
        QVERIFY(!command.contains(QStringLiteral("--jitter")));

        // Run it as a user would (the program's path and a folder of ours in place of "sgdscope" and "run").
        QStringList args = QProcess::splitCommand(command);
        QCOMPARE(args.takeFirst(), QStringLiteral("sgdscope"));
        const int out = static_cast<int>(args.indexOf(QStringLiteral("--out")));
        const QString folder = m_dir.filePath(QStringLiteral("copied"));
        args[out + 1] = folder;
        const Result r = runProgram(args);
        QCOMPARE(r.exitCode, 0);
        const Json summary = readJson(folder + QStringLiteral("/summary.json"));
        const Json& sync = summary.at("runs").at(0);
        QCOMPARE(sync.at("mode").get<std::string>(), std::string("sync"));
        QCOMPARE(sync.at("updates").get<std::int64_t>(), w.controller()->updates(LeftColumn));
        QCOMPARE(
            QString::fromStdString(sync.at("params_digest").get<std::string>()), w.controller()->digest(LeftColumn));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void copiedCommandLineOfASimulatedClusterToo()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        // The simulated cluster runs in a child process; its copied command names the cluster, and its sync run
        // ends on the child's sync parameters.
        MainWindow w;
        w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
        QCOMPARE(w.applySettings(windowSettings({{"engine", "sim"}, {"cluster", "datacenter"}, {"workers", "6"},
                     {"preset", "parabola"}, {"rotating-straggler", "3"}})),
            QString());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > 20, 60000);
        w.controller()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->digest(LeftColumn).isEmpty(), 20000);
        const QString command = w.controller()->reproducingCommand();
        QVERIFY2(
            command.contains(QStringLiteral("--rotating-straggler 3 --engine sim --cluster datacenter --workers 6")),
            qPrintable(command));
        QStringList args = QProcess::splitCommand(command);
        args.removeFirst();
        const QString folder = m_dir.filePath(QStringLiteral("copied-sim"));
        args[args.indexOf(QStringLiteral("--out")) + 1] = folder;
        const Result r = runProgram(args);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json summary = readJson(folder + QStringLiteral("/summary.json"));
        QCOMPARE(summary.at("runs").at(0).at("updates").get<std::int64_t>(), w.controller()->updates(LeftColumn));
        QCOMPARE(QString::fromStdString(summary.at("runs").at(0).at("params_digest").get<std::string>()),
            w.controller()->digest(LeftColumn));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestWindowCommandLine)
#include "test_window_command_line.moc"
