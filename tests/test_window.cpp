// The window as the front door (offscreen): run options on its command line set the panel and are refused
// with the reason where they cannot apply; a run folder named on the command line is shown and titled; File >
// Open data trains on a CSV file and a bad one changes nothing; Save run as... writes a run folder that Open
// run reads back; Run > Copy command line gives the window's sync parameters bit for bit; the first look shows
// the initial loss before Start; a batch per worker grows with the workers.
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "ui/charts/AccuracyChart.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TrendChart.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace sgdscope;
using namespace sgdscope::ui;

namespace {
using Options = std::vector<std::pair<std::string, std::string>>;

QString refusalOf(const Options& options)
{
    try {
        (void)windowSettings(options);
    } catch (const SgdError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

Result runProgram(const QStringList& args, int timeoutMs = 120000)
{
    QProcess p;
    p.start(QStringLiteral(SGDSCOPE_BINARY), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
        QString::fromUtf8(p.readAllStandardError())};
}

Json readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Json();
    const QByteArray text = f.readAll();
    return parseJson(std::string_view(text.constData(), static_cast<std::size_t>(text.size())), path.toStdString());
}

const QString csvFile = QStringLiteral(SGDSCOPE_TEST_DATA "/regression.csv");
} // namespace

// ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process: the tests that start the program are
// skipped there; the others (the window's threads: training, first looks) run under it (label "threads").
#if defined(__SANITIZE_THREAD__) || (defined(__has_feature) && __has_feature(thread_sanitizer))
#define SKIP_IF_FORK_UNDER_TSAN() QSKIP("ThreadSanitizer cannot follow a fork from a threaded process")
#else
#define SKIP_IF_FORK_UNDER_TSAN() (void)0
#endif

class TestWindow : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("sgdscope-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("test_window"));
        QSettings().clear();
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

    // `--mode ssp,backup` on the window's command line: the columns' headers, titles, file stems and lower charts
    // follow the modes (backup is sync-like: wait per update; ssp pushes: staleness), each column trains its own
    // mode, and S set in the header while running reaches the ssp trainer: with S = 0 and 2 workers no push can
    // be staler than the other worker's one push, where S = 1000 and an 8x straggler gave about 7.
    void aColumnsHeaderPicksItsModeAndKnob()
    {
        const SessionSettings s = windowSettings({{"mode", "ssp,backup"}, {"workers", "2"}, {"slow", "1:8"},
            {"ssp-bound", "1000"}, {"layers", "1,64,64,1"}});
        QCOMPARE(s.modes.names[LeftColumn], QStringLiteral("ssp"));
        QCOMPARE(s.modes.names[RightColumn], QStringLiteral("backup"));
        QCOMPARE(s.modes.sspBound, 1000);
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        ModeColumn* ssp = w.column(LeftColumn);
        ModeColumn* backup = w.column(RightColumn);
        QCOMPARE(ssp->modeBox()->currentText(), QStringLiteral("SSP"));
        QCOMPARE(backup->modeBox()->currentText(), QStringLiteral("Backup"));
        // Each header has its mode's knob: S up to the box's end, B up to P - 1; the knob of sync or async is none.
        QVERIFY(!ssp->knobBox()->isHidden() && ssp->lambdaBox()->isHidden());
        QCOMPARE(ssp->knobLabel()->text(), QStringLiteral("S ="));
        QCOMPARE(ssp->knobBox()->value(), 1000);
        QCOMPARE(backup->knobLabel()->text(), QStringLiteral("B ="));
        QCOMPARE(backup->knobBox()->value(), 1);
        QCOMPARE(backup->knobBox()->maximum(), 1);
        QVERIFY2(ssp->knobBox()->toolTip().contains(QStringLiteral("ssp mode")), qPrintable(ssp->knobBox()->toolTip()));
        // The comparison names both modes, in their colours' order.
        QCOMPARE(w.comparison(0)->title(), QStringLiteral("SSP vs Backup: loss against samples seen"));
        QCOMPARE(w.comparison(1)->title(), QStringLiteral("SSP vs Backup: loss against seconds"));
        QVERIFY2(w.accuracyChart()->title().startsWith(QStringLiteral("SSP vs Backup: ")),
            qPrintable(w.accuracyChart()->title()));
        QCOMPARE(w.comparison(0)->curveName(0), QStringLiteral("SSP (smoothed)"));
        QCOMPARE(w.comparison(0)->curveName(1), QStringLiteral("Backup (smoothed)"));
        // The lower charts follow the family: backup waits per update; ssp has both, staleness and its waits at
        // the bound.
        QCOMPARE(ssp->lossChart()->title(), QStringLiteral("SSP loss"));
        QCOMPARE(ssp->lossChart()->exportName(), QStringLiteral("ssp-loss"));
        QCOMPARE(ssp->histogram()->title(), QStringLiteral("SSP staleness"));
        QCOMPARE(ssp->histogram()->exportName(), QStringLiteral("ssp-staleness"));
        QVERIFY(!ssp->trend());
        QCOMPARE(ssp->boundWaits()->title(), QStringLiteral("SSP wait at its bound"));
        QCOMPARE(ssp->boundWaits()->exportName(), QStringLiteral("ssp-bound-wait"));
        QVERIFY(!backup->boundWaits());
        QCOMPARE(backup->histogram()->title(), QStringLiteral("Backup wait per update"));
        QCOMPARE(backup->histogram()->exportName(), QStringLiteral("backup-wait"));
        QCOMPARE(backup->trend()->exportName(), QStringLiteral("backup-wait-trend"));

        w.controller()->start();
        QTRY_VERIFY2_WITH_TIMEOUT(
            w.series(LeftColumn).points().size() > 50 && w.series(RightColumn).status().updates > 20,
            qPrintable(w.lastError()), 60000);
        // Each column trains its own mode: backup's waits per update, ssp's waits at its bound per push (one per
        // push; an update of backup is not a push).
        QVERIFY(!w.series(RightColumn).status().waitDecades.empty());
        std::int64_t sspWaits = 0;
        for (const std::int64_t n : w.series(LeftColumn).status().waitDecades)
            sspWaits += n;
        QVERIFY(sspWaits > 0);
        QVERIFY(w.series(LeftColumn).status().stalenessCounts.size() > 1);
        // With S = 1000 the straggler's pushes are stale by about the fast worker's pushes in between.
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(w.series(LeftColumn).points().begin(), w.series(LeftColumn).points().end(),
                                     [](const LossPoint& p) { return p.staleness >= 3; }),
            30000);

        // S = 0 in the header, while running.
        ssp->knobBox()->setValue(0);
        QCOMPARE(w.controller()->runningSettings().modes.sspBound, 0);
        Marker change;
        QTRY_VERIFY_WITH_TIMEOUT(
            std::any_of(w.series(LeftColumn).markers().begin(), w.series(LeftColumn).markers().end(),
                [&](const Marker& m) {
                    change = m;
                    return m.text.endsWith(QStringLiteral(" S=0"));
                }),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > change.index + 200, 60000);
        std::int64_t after = 0;
        std::int64_t stalest = 0;
        for (const LossPoint& p : w.series(LeftColumn).points()) {
            if (p.index > change.index) {
                ++after;
                stalest = std::max(stalest, p.staleness);
            }
        }
        QVERIFY(after > 20);
        QVERIFY2(stalest <= 1, qPrintable(QStringLiteral("staleness %1 after S = 0").arg(stalest)));
        // ... and its fast worker is now held at the bound: its pushes' waits are measured, not zero.
        double heldLongest = 0.0;
        for (const LossPoint& p : w.series(LeftColumn).points()) {
            if (p.index > change.index)
                heldLongest = std::max(heldLongest, p.waitSeconds);
        }
        QVERIFY2(heldLongest > 0, "no push after S = 0 was held at the bound");
        // The backup column's marks carry its own knob.
        QVERIFY(!w.series(RightColumn).markers().empty());
        QVERIFY2(w.series(RightColumn).markers().back().text.endsWith(QStringLiteral(" B=1")),
            qPrintable(w.series(RightColumn).markers().back().text));

        // Saved and opened again: the folder's two modes fill the columns.
        w.controller()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->digest(LeftColumn).isEmpty(), 10000);
        QTest::qWait(200);
        const QString folder = m_dir.filePath(QStringLiteral("ssp-backup"));
        QCOMPARE(w.saveRun(folder), QString());
        const Json summary = readJson(folder + QStringLiteral("/summary.json"));
        QCOMPARE(summary.at("runs").at(0).at("mode").get<std::string>(), std::string("ssp"));
        QCOMPARE(summary.at("runs").at(1).at("mode").get<std::string>(), std::string("backup"));
        QVERIFY(summary.at("runs").at(0).contains("staleness"));
        QVERIFY(summary.at("runs").at(1).contains("update_wait"));
        QCOMPARE(summary.at("config").at("ssp-bound").get<int>(), 1000); // as the run started
        MainWindow other; // (sync | async)
        QCOMPARE(other.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("Sync"));
        QCOMPARE(other.openRun(folder), QString());
        QCOMPARE(other.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("SSP"));
        QCOMPARE(other.column(RightColumn)->modeBox()->currentText(), QStringLiteral("Backup"));
        QCOMPARE(other.column(RightColumn)->histogram()->title(), QStringLiteral("Backup wait per update"));
        QCOMPARE(other.series(LeftColumn).points().size(), w.series(LeftColumn).points().size());
        QCOMPARE(other.series(RightColumn).status().updates, w.series(RightColumn).status().updates);
        QCOMPARE(other.comparison(0)->title(), QStringLiteral("SSP vs Backup: loss against samples seen"));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
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

    // Picking in one column the mode the other shows swaps them; a new mode waits for Reset while a run goes on.
    void pickingTheOtherColumnsModeSwapsThem()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"preset", "parabola"}})), QString());
        ModeColumn* left = w.column(LeftColumn);
        ModeColumn* right = w.column(RightColumn);
        QCOMPARE(left->modeBox()->currentText(), QStringLiteral("Sync"));
        QVERIFY(left->knobBox()->isHidden() && left->lambdaBox()->isHidden() && left->knobLabel()->isHidden());
        emit left->modeBox()->activated(left->modeBox()->findData(QStringLiteral("async")));
        QCOMPARE(w.panel()->settings().modes.names[LeftColumn], QStringLiteral("async"));
        QCOMPARE(w.panel()->settings().modes.names[RightColumn], QStringLiteral("sync"));
        QCOMPARE(left->modeBox()->currentText(), QStringLiteral("Async"));
        QCOMPARE(right->modeBox()->currentText(), QStringLiteral("Sync"));
        QCOMPARE(left->histogram()->title(), QStringLiteral("Async staleness")); // idle: shown at once
        QCOMPARE(right->histogram()->title(), QStringLiteral("Sync wait per update"));
        QCOMPARE(w.comparison(0)->title(), QStringLiteral("Async vs Sync: loss against samples seen"));
        QVERIFY(left->modeBox()->toolTip().contains(QStringLiteral("swaps")));

        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(RightColumn).status().updates > 5, 20000);
        QSignalSpy restart(w.controller(), &Controller::restartNeeded);
        emit right->modeBox()->activated(right->modeBox()->findData(QStringLiteral("dc-asgd")));
        QVERIFY(!restart.isEmpty() && restart.last().at(0).toBool());
        // The charts still show the running mode; the header says when the new one comes.
        QCOMPARE(right->modeBox()->currentText(), QStringLiteral("DC-ASGD"));
        QVERIFY(!right->lambdaBox()->isHidden());
        QCOMPARE(right->lambdaBox()->value(), 0.04);
        QCOMPARE(right->shownMode(), QStringLiteral("sync"));
        QCOMPARE(right->histogram()->title(), QStringLiteral("Sync wait per update"));
        QCOMPARE(right->noteLabel()->text(), QStringLiteral("applies on Reset (Sync runs until then)"));
        QCOMPARE(w.controller()->runningSettings().modes.names[RightColumn], QStringLiteral("sync"));
        w.controller()->reset();
        QCOMPARE(right->shownMode(), QStringLiteral("dc-asgd"));
        QCOMPARE(right->histogram()->title(), QStringLiteral("DC-ASGD staleness"));
        QVERIFY(right->noteLabel()->isHidden());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(RightColumn).status().updates > 5, 20000);
        QVERIFY(w.series(RightColumn).status().waitDecades.empty()); // pushes: dc-asgd trains
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // Run > Copy command line and a simulated cluster's child run the columns' modes with their own knobs only;
    // an MPI job of one process runs the column that needs no parameter server.
    void headlessArgumentsRunTheColumnsModes()
    {
        SessionSettings s;
        s.engine = QStringLiteral("sim");
        s.modes.names = {QStringLiteral("ssp"), QStringLiteral("local-sgd")};
        const QString args = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(args.contains(QStringLiteral("--mode ssp,local-sgd --ssp-bound 3 --local-steps 8")), qPrintable(args));
        QVERIFY2(!args.contains(QStringLiteral("--backup-workers")) && !args.contains(QStringLiteral("--dc-lambda")),
            qPrintable(args));
        // It is a valid headless configuration (the knobs belong to the modes given).
        const RunConfig c = headlessConfig(s, 10);
        QCOMPARE(c.modesText(), std::string("ssp,local-sgd"));
        QCOMPARE(c.localSteps, 8);
        // The default pair is headless's default (both): no --mode; `--mode both` on the window's command line is it.
        QVERIFY(!headlessArguments(SessionSettings(), 0, QStringLiteral("out")).contains(QStringLiteral("--mode")));
        const SessionSettings both = windowSettings({{"mode", "async,sync"}, {"mode", "both"}});
        QCOMPARE(both.modes.names[LeftColumn], QStringLiteral("sync"));
        QCOMPARE(both.modes.names[RightColumn], QStringLiteral("async"));
        // MPI: one process runs local-sgd only (dc-asgd needs a parameter server and a worker).
        s.engine = QStringLiteral("mpi");
        s.workers = 1;
        s.modes.names = {QStringLiteral("dc-asgd"), QStringLiteral("local-sgd")};
        const QString one = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(one.contains(QStringLiteral("--mode local-sgd --local-steps 8")), qPrintable(one));
        QVERIFY2(!one.contains(QStringLiteral("--dc-lambda")), qPrintable(one));
        s.workers = 3;
        const QString three = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(three.contains(QStringLiteral("--mode dc-asgd,local-sgd --dc-lambda 0.04 --local-steps 8")),
            qPrintable(three));
    }

    // `--async-lr staleness` on the window's command line sets the panel's push learning rate (not a plain run
    // option), Copy command line carries it, and a running ssp column applies each push with lr / max(1, s): its
    // mean applied rate is what the staleness histogram (every push) predicts, which is below lr as soon as a push
    // is 2 or more stale (the constant rule gives lr exactly). Set back to constant while running, every later push
    // has lr: the mean moves as that predicts.
    void pushLearningRateFromTheCommandLineAppliesLive()
    {
        const SessionSettings s = windowSettings(
            {{"async-lr", "staleness"}, {"mode", "sync,ssp"}, {"workers", "2"}, {"slow", "1:8"}, {"ssp-bound", "50"}});
        QVERIFY(s.stalenessLearningRate);
        QVERIFY(s.option(QStringLiteral("async-lr")).isEmpty()); // the control's, not a run option
        const QString args = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(args.contains(QStringLiteral("--async-lr staleness")), qPrintable(args));
        QCOMPARE(headlessConfig(s, 10).asyncLr, AsyncLearningRate::Staleness);
        // Without a pushing mode it has nothing to divide: refused on the command line, left out of the command.
        QVERIFY(refusalOf({{"async-lr", "staleness"}, {"mode", "sync,backup"}})
                    .contains(QStringLiteral("applies to modes that push one by one")));
        SessionSettings teamOnly = s;
        teamOnly.modes.names = {QStringLiteral("sync"), QStringLiteral("backup")};
        QVERIFY(!headlessArguments(teamOnly, 0, QStringLiteral("out")).contains(QStringLiteral("--async-lr")));

        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        QComboBox* pushLr = w.panel()->pushLearningRateBox();
        QCOMPARE(pushLr->currentIndex(), 1);
        QVERIFY(pushLr->isEnabled());
        QVERIFY(w.panel()->settings().stalenessLearningRate);
        const double lr = static_cast<double>(static_cast<float>(w.panel()->settings().learningRate)); // as applied
        // Sums over the column's staleness histogram: pushes, pushes 2 or more stale, and lr / max(1, s).
        struct Pushes
        {
            std::int64_t all = 0;
            std::int64_t stale = 0;
            double divided = 0.0;
        };
        auto pushesOf = [lr](const ModeStatus& st) {
            Pushes p;
            for (std::size_t k = 0; k < st.stalenessCounts.size(); ++k) {
                p.all += st.stalenessCounts[k];
                p.stale += k >= 2 ? st.stalenessCounts[k] : 0;
                p.divided += static_cast<double>(st.stalenessCounts[k]) * lr
                    / static_cast<double>(std::max<std::size_t>(1, k));
            }
            return p;
        };
        constexpr double rounding = 1e-6; // relative: each push's rate is a float
        w.controller()->start();
        QTRY_VERIFY2_WITH_TIMEOUT(
            pushesOf(w.series(RightColumn).status()).stale >= 5, qPrintable(w.lastError()), 60000);
        const ModeStatus stale = w.series(RightColumn).status();
        const Pushes p0 = pushesOf(stale);
        QVERIFY(!stale.stalenessTailFolded && !stale.diverged);
        const double predicted = p0.divided / static_cast<double>(p0.all);
        QVERIFY2(lr - predicted > 20 * rounding * lr, qPrintable(QStringLiteral("%1 of %2").arg(predicted).arg(lr)));
        QVERIFY2(std::abs(stale.meanLearningRate - predicted) < rounding * lr,
            qPrintable(QStringLiteral("mean lr %1, lr / max(1, s) over the pushes %2 (lr %3)")
                           .arg(stale.meanLearningRate)
                           .arg(predicted)
                           .arg(lr)));
        QVERIFY(w.statusLabel(RightColumn)->text().contains(QStringLiteral("mean lr")));

        // Constant again, live: a change the session marks, and from then on every push has lr.
        pushLr->setCurrentIndex(0);
        QVERIFY(!w.controller()->runningSettings().stalenessLearningRate);
        QCOMPARE(w.controller()->state(), Controller::State::Running);
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(RightColumn).markers().empty(), 10000);
        QVERIFY(!w.series(RightColumn).markers().back().text.contains(QStringLiteral("/staleness")));
        const ModeStatus before = w.series(RightColumn).status(); // after the change: later pushes have lr
        const Pushes p1 = pushesOf(before);
        QTRY_VERIFY_WITH_TIMEOUT(pushesOf(w.series(RightColumn).status()).stale >= p1.stale + 5, 60000);
        const ModeStatus after = w.series(RightColumn).status();
        const Pushes p2 = pushesOf(after);
        QVERIFY(!after.stalenessTailFolded && !after.diverged);
        const double constant
            = (before.meanLearningRate * static_cast<double>(p1.all) + lr * static_cast<double>(p2.all - p1.all))
            / static_cast<double>(p2.all);
        const double divided = (before.meanLearningRate * static_cast<double>(p1.all) + p2.divided - p1.divided)
            / static_cast<double>(p2.all);
        QVERIFY(constant - divided > 20 * rounding * lr); // the two rules differ over these pushes
        QVERIFY2(std::abs(after.meanLearningRate - constant) < rounding * lr,
            qPrintable(QStringLiteral("mean lr %1; constant from the change gives %2, lr / max(1, s) %3")
                           .arg(after.meanLearningRate)
                           .arg(constant)
                           .arg(divided)));
        w.controller()->reset();
        // The columns without a pushing mode leave it nothing to do.
        emit w.column(RightColumn)
            ->modeBox()
            ->activated(w.column(RightColumn)->modeBox()->findData(QStringLiteral("backup")));
        QVERIFY(!pushLr->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // Knobs restored from QSettings are what their boxes offer (a stored lambda of -1 showed 0.000 and Start
    // failed); lambda's box shows a small lambda as it is; an MPI job's B beyond its backup's workers is refused on
    // the command line, and a B the panel cuts (fewer processes) is said in the column.
    void knobsAreWhatTheirBoxesShow()
    {
        {
            QSettings stored;
            stored.setValue(QStringLiteral("modes"), QStringList {QStringLiteral("ssp"), QStringLiteral("dc-asgd")});
            stored.setValue(QStringLiteral("sspBound"), 5000);
            stored.setValue(QStringLiteral("backupWorkers"), -3);
            stored.setValue(QStringLiteral("localSteps"), 0);
            stored.setValue(QStringLiteral("dcLambda"), -1.0);
        }
        {
            MainWindow restored;
            const ColumnModes modes = restored.panel()->settings().modes;
            QCOMPARE(modes.sspBound, 1000);
            QCOMPARE(modes.backupWorkers, 0);
            QCOMPARE(modes.localSteps, 1);
            QCOMPARE(modes.dcLambda, 0.0);
            QCOMPARE(restored.column(LeftColumn)->knobBox()->value(), 1000);
            QCOMPARE(restored.column(RightColumn)->lambdaBox()->value(), 0.0);
        }
        QSettings().clear();

        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"mode", "sync,dc-asgd"}, {"dc-lambda", "0.0004"}})), QString());
        QCOMPARE(w.column(RightColumn)->lambdaBox()->value(), 0.0004);
        QCOMPARE(w.column(RightColumn)->lambdaBox()->text(), QStringLiteral("0.0004"));
        QCOMPARE(w.panel()->settings().modes.dcLambda, 0.0004);
        w.column(RightColumn)->lambdaBox()->setValue(0.04);
        QCOMPARE(w.column(RightColumn)->lambdaBox()->text(), QStringLiteral("0.04"));

        // MPI: backup has a parameter server and P - 1 workers, so B = 3 of 4 processes applies nothing.
        const QString refused = w.applySettings(
            windowSettings({{"engine", "mpi"}, {"workers", "4"}, {"mode", "sync,backup"}, {"backup-workers", "3"}}));
        QVERIFY2(refused.contains(QStringLiteral("--backup-workers: 3 is not allowed in an MPI job of 4 processes")),
            qPrintable(refused));
        QCOMPARE(w.applySettings(windowSettings(
                     {{"engine", "mpi"}, {"workers", "4"}, {"mode", "sync,backup"}, {"backup-workers", "2"}})),
            QString());
        QCOMPARE(w.panel()->settings().modes.backupWorkers, 2);
        QVERIFY(w.column(RightColumn)->noteLabel()->isHidden());
        w.panel()->workersSlider()->setValue(3); // 3 processes: backup on 2 workers, B at most 1
        QCOMPARE(w.panel()->settings().modes.backupWorkers, 1);
        QVERIFY(!w.column(RightColumn)->noteLabel()->isHidden());
        QVERIFY2(w.column(RightColumn)->noteLabel()->text().startsWith(QStringLiteral("B = 2 is cut to 1: an MPI job")),
            qPrintable(w.column(RightColumn)->noteLabel()->text()));
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
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

    // A column's updates axis counts its mode's unit (local-sgd's rounds, a pushing mode's pushes), and a knob's
    // tooltip says when it applies: live on threads, at the next job on MPI.
    void columnsSayTheirModesUnits()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"mode", "local-sgd,ssp"}})), QString());
        for (ModeColumn* c : {w.column(LeftColumn), w.column(RightColumn)})
            c->setXAxis(XAxisKind::Updates);
        QCOMPARE(
            w.column(LeftColumn)->lossChart()->xAxisTitle(), QStringLiteral("rounds (H local steps and an averaging)"));
        QCOMPARE(w.column(RightColumn)->lossChart()->xAxisTitle(), QStringLiteral("pushes"));
        w.column(RightColumn)->setXAxis(XAxisKind::Samples);
        QCOMPARE(w.column(RightColumn)->lossChart()->xAxisTitle(), QStringLiteral("samples seen"));
        QVERIFY(
            w.column(LeftColumn)->knobBox()->toolTip().contains(QStringLiteral("Applies live, from the next round")));
        w.panel()->engineBox()->setCurrentIndex(w.panel()->engineBox()->findData(QStringLiteral("mpi")));
        const QString tip = w.column(LeftColumn)->knobBox()->toolTip();
        QVERIFY2(
            tip.contains(QStringLiteral("Applies on Reset")) && !tip.contains(QStringLiteral("live")), qPrintable(tip));
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
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

QTEST_MAIN(TestWindow)
#include "test_window.moc"
