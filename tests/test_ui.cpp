// The window, offscreen: sliders reach the controller, points arrive, pause/reset/live changes behave,
// random use never crashes or leaks a thread, exports are real pictures, closing mid-run is clean; a
// simulated cluster runs in a child process and takes live changes, an MPI job streams into the window and
// stops, a finished run's folder opens.
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/ExternalRun.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/PointConversion.h"
#include "ui/ProgressJson.h"
#include "ui/SeriesStore.h"
#include "ui/TrainingSession.h"
#include "ui/charts/AccuracyChart.h"
#include "ui/charts/Exportable.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TimelineStrip.h"
#include "ui/charts/WorkerBarsChart.h"

#include "core/common/Json.h"
#include "core/metrics/RunMetrics.h"
#include "core/nn/MlpSpec.h"
#include "core/run/RunConfig.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

using namespace sgdscope::ui;

namespace {
/// Pixels that differ from the background, and dark ones (text, axes, lines).
struct Ink
{
    double variance = 0;
    int dark = 0;
};

Ink inkOf(const QImage& image)
{
    Ink ink;
    double sum = 0, sum2 = 0;
    const int step = 2;
    int n = 0;
    for (int y = 0; y < image.height(); y += step) {
        for (int x = 0; x < image.width(); x += step) {
            const int g = qGray(image.pixel(x, y));
            sum += g;
            sum2 += static_cast<double>(g) * g;
            ink.dark += g < 100 ? 1 : 0;
            ++n;
        }
    }
    ink.variance = sum2 / n - (sum / n) * (sum / n);
    return ink;
}

void setParabola(MainWindow& w, int workers)
{
    SessionSettings s = w.panel()->settings();
    s.preset = QStringLiteral("parabola");
    s.workers = workers;
    s.batch = 0;
    s.learningRate = 0;
    s.slowWorker = -1;
    w.panel()->setSettings(s);
    w.controller()->setSettings(w.panel()->settings());
}
} // namespace

class TestUi : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("sgdscope-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("test_ui"));
    }

    void opensOnTheParabolaPreset()
    {
        QSettings().clear(); // a new user
        MainWindow w;
        QCOMPARE(w.panel()->presetBox()->currentText(), QStringLiteral("parabola"));
        QCOMPARE(w.controller()->settings().preset, QStringLiteral("parabola"));
        QCOMPARE(w.controller()->settings().batch, 50);
    }

    // A long run keeps an evenly thinned curve: the early part as dense as the late part.
    // Hovering a worker's bar names the worker, its own waits and the waits it caused; beyond 32 workers the bars
    // are quantiles of idle time, and each still names its own worker.
    void workerBarsSayWhoMadeWhomWait()
    {
        WorkerBarsChart bars(QStringLiteral("Sync worker time"), QString());
        std::vector<WorkerTime> workers(3);
        for (std::size_t w = 0; w < workers.size(); ++w) {
            workers[w].wall = 4.0;
            workers[w].busy = w == 1 ? 4.0 : 1.0;
            workers[w].idle = w == 1 ? 0.0 : 3.0;
            workers[w].madeOthersWait = w == 1 ? 6.0 : 0.0;
        }
        bars.setWorkers(workers);
        QCOMPARE(bars.barText(1),
            QStringLiteral("worker 1: busy 100.0%, idle 0.0% (it waited 0 s)\nmade others wait 6 s (their waits for "
                           "it, summed)"));
        QVERIFY(bars.barText(0).contains(QStringLiteral("idle 75.0% (it waited 3 s)\nmade others wait 0 s")));
        QVERIFY(bars.barText(3).isEmpty());
        std::vector<WorkerTime> many(100);
        for (std::size_t w = 0; w < many.size(); ++w) {
            many[w].wall = 1.0;
            many[w].idle = w == 42 ? 0.0 : 0.5; // the least idle worker: the 0th percentile bar
            many[w].madeOthersWait = w == 42 ? 9.0 : 0.0;
        }
        bars.setWorkers(many);
        QVERIFY2(bars.barText(0).startsWith(QStringLiteral("worker 42:"))
                && bars.barText(0).contains(QStringLiteral("made others wait 9 s")),
            qPrintable(bars.barText(0)));
    }

    void seriesStoreThinsEvenly()
    {
        ModeSeries store(64);
        std::int64_t next = 0;
        for (int batch = 0; batch < 100; ++batch) {
            MetricsBatch b;
            for (int i = 0; i < 1000; ++i, ++next)
                b.points[LeftColumn].push_back({next, 10 * (next + 1), 0.001 * static_cast<double>(next), 1.0, 0});
            store.add(b, LeftColumn);
        }
        const auto& points = store.points();
        QVERIFY(points.size() < 64);
        QVERIFY(points.size() >= 32);
        QCOMPARE(points.front().index, std::int64_t(0));
        const std::int64_t step = points[1].index - points[0].index;
        for (std::size_t i = 1; i < points.size(); ++i)
            QCOMPARE(points[i].index - points[i - 1].index, step);
        QVERIFY(points.back().index > 100000 - 2 * step); // and it reaches the end
    }

    // A diverged run is not drawn as a plunge: its curve ends at the last finite point, marked there.
    void divergedCurveEndsAtItsLastFinitePoint()
    {
        ModeSeries store;
        MetricsBatch b;
        for (std::int64_t i = 0; i < 10; ++i)
            b.points[LeftColumn].push_back({i, i + 1, 0.1 * static_cast<double>(i), 1.0 + static_cast<double>(i), 0});
        b.points[LeftColumn].push_back({10, 11, 1.0, std::nan(""), 0});
        b.status[LeftColumn].valid = true;
        b.status[LeftColumn].diverged = true;
        store.add(b, LeftColumn);
        QCOMPARE(store.points().size(), std::size_t(10));
        QVERIFY(std::isfinite(store.points().back().loss));
        for (const QPointF& p : decimateMinMax(store.points(), XAxisKind::Updates, 0, 20, 4))
            QVERIFY2(p.y() > 0.5, "a point below the data: a non-finite loss drawn as a plunge");
        LossChart chart(
            QStringLiteral("t"), QStringLiteral("t"), {{&store, Qt::blue, QStringLiteral("sync")}}, XAxisKind::Updates);
        chart.resize(400, 300);
        chart.refresh();
        QCOMPARE(chart.divergedMarkerX(0), 10.0); // update index 9 is the 10th update: x = 10
    }

    // A loss that blew up by thirty decades keeps a readable axis: at most seven ticks, not one a decade.
    void blownUpLossKeepsAReadableAxis()
    {
        ModeSeries store;
        MetricsBatch b;
        for (std::int64_t i = 0; i < 40; ++i)
            b.points[LeftColumn].push_back(
                {i, i + 1, 0.1 * static_cast<double>(i), std::pow(10.0, static_cast<double>(i % 33) - 2.0), 0});
        b.status[LeftColumn].valid = true;
        store.add(b, LeftColumn);
        LossChart chart(
            QStringLiteral("t"), QStringLiteral("t"), {{&store, Qt::blue, QStringLiteral("sync")}}, XAxisKind::Updates);
        chart.resize(400, 300);
        chart.refresh();
        QVERIFY2(chart.yTickCount() <= 7, qPrintable(QString::number(chart.yTickCount())));
        // And a loss of two decades keeps a tick per decade.
        ModeSeries calm;
        MetricsBatch c;
        for (std::int64_t i = 0; i < 40; ++i)
            c.points[LeftColumn].push_back(
                {i, i + 1, 0.1 * static_cast<double>(i), 2.0 / (1.0 + static_cast<double>(i)), 0});
        c.status[LeftColumn].valid = true;
        calm.add(c, LeftColumn);
        LossChart calmChart(
            QStringLiteral("t"), QStringLiteral("t"), {{&calm, Qt::blue, QStringLiteral("sync")}}, XAxisKind::Updates);
        calmChart.resize(400, 300);
        calmChart.refresh();
        QCOMPARE(calmChart.yTickCount(), 4); // 0.01, 0.1, 1, 10
    }

    void histogramsFoldTheirTailIntoTheLastBar()
    {
        // More staleness values than bars: bins of a round width over the range seen.
        const auto [labels, counts] = stalenessBars({5, 4, 3, 2, 1, 1, 1}, false, 4);
        QCOMPARE(labels,
            (QStringList {QStringLiteral("0-1"), QStringLiteral("2-3"), QStringLiteral("4-5"), QStringLiteral("6-7")}));
        QCOMPARE(counts, (std::vector<std::int64_t> {9, 5, 2, 1}));
        // 1,024 simulated workers: every push is about 1,000 stale. The bars cover the range seen (990 to 1,061
        // here) in bins of 5, none empty of meaning, instead of one overflow bar past 15; a status tail folded at
        // 1,062 stays "or more".
        std::vector<std::int64_t> wide(1063, 0);
        for (int s = 990; s <= 1062; ++s)
            wide[static_cast<std::size_t>(s)] = 1 + (s % 7);
        const auto [wideLabels, wideCounts] = stalenessBars(wide, true, 16);
        QCOMPARE(wideLabels.size(), 15);
        QCOMPARE(wideLabels.front(), QStringLiteral("990-994"));
        QCOMPARE(wideLabels.back(), QStringLiteral("1060+"));
        std::int64_t total = 0;
        for (const std::int64_t c : wide)
            total += c;
        QCOMPARE(std::accumulate(wideCounts.begin(), wideCounts.end(), std::int64_t(0)), total);
        QVERIFY(std::all_of(wideCounts.begin(), wideCounts.end(), [](std::int64_t c) { return c > 0; }));
        // A tail the status already folded is labelled as such.
        QCOMPARE(stalenessBars({1, 1, 1, 9}, true, 4).first.back(), QStringLiteral("3+"));
        QCOMPARE(stalenessBars({1, 1, 1, 9}, false, 4).first.back(), QStringLiteral("3"));
        // The status keeps every count: staleness beyond the kept entries lands in the last one.
        sgdscope::RunMetrics metrics(sgdscope::Mode::Async);
        for (int s = 0; s < 20; ++s) {
            sgdscope::UpdateEvent u;
            u.mode = sgdscope::Mode::Async;
            u.worker = 0;
            u.versionApplied = s;
            metrics.addUpdate(u);
        }
        sgdscope::ModeStanding standing;
        standing.metrics = &metrics;
        const ModeStatus status = modeStatus(standing, 0.0, 8);
        QCOMPARE(status.stalenessCounts.size(), std::size_t(8));
        QCOMPARE(status.stalenessCounts.back(), std::int64_t(13)); // staleness 7 to 19
        QVERIFY(status.stalenessTailFolded);
        // Waits by decade: from the first to the last that holds an update, at least four bars.
        const auto [waitLabels, waitCounts] = waitBars({0, 0, 3, 0, 7, 0, 0, 0, 0, 0, 0});
        QCOMPARE(waitLabels.front(), QStringLiteral("10\u00b5"));
        QCOMPARE(waitLabels.back(), QStringLiteral("10m"));
        QCOMPARE(waitCounts, (std::vector<std::int64_t> {3, 0, 7, 0}));
        // Fewer decades than four bars (a run folder's short histogram): the bars extend past them, with zeros.
        const auto [shortLabels, shortCounts] = waitBars({0, 5});
        QCOMPARE(shortLabels,
            (QStringList {QStringLiteral("1µ"), QStringLiteral("10µ"), QStringLiteral("100µ"), QStringLiteral("1m")}));
        QCOMPARE(shortCounts, (std::vector<std::int64_t> {5, 0, 0, 0}));
    }

    void slidersChangeTheControllersConfiguration()
    {
        MainWindow w;
        setParabola(w, 2);
        ControlPanel* p = w.panel();
        p->workersSlider()->setValue(5);
        QCOMPARE(w.controller()->settings().workers, 5);
        p->accumSlider()->setValue(3);
        QCOMPARE(w.controller()->settings().accum, 3);
        p->batchSlider()->setValue(p->batchSlider()->minimum() + 3); // 1, 2, 4, 8, ...
        QCOMPARE(w.controller()->settings().batch, 8);
        p->learningRateSlider()->setValue(p->learningRateSlider()->maximum());
        QVERIFY(std::abs(w.controller()->settings().learningRate - 1.0) < 1e-9);
        p->slowWorkerBox()->setCurrentIndex(3); // "none", worker 0, 1, 2
        QCOMPARE(w.controller()->settings().slowWorker, 2);
        p->slowFactorSlider()->setValue(12);
        QCOMPARE(w.controller()->settings().slowFactor, 6.0);
        p->jitterSlider()->setValue(4);
        QVERIFY(std::abs(w.controller()->settings().jitter - 0.2) < 1e-9);
        p->seedBox()->setValue(42);
        QCOMPARE(w.controller()->settings().seed, std::uint64_t(42));
        p->presetBox()->setCurrentIndex(p->presetBox()->findText(QStringLiteral("blobs")));
        QCOMPARE(w.controller()->settings().preset, QStringLiteral("blobs"));
        QCOMPARE(w.controller()->settings().batch, 256); // the preset's own
        // Fewer workers than the straggler's index: the straggler list follows.
        p->workersSlider()->setValue(2);
        QVERIFY(w.controller()->settings().slowWorker < 2);
    }

    void startPauseResetAndLiveChanges()
    {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        setParabola(w, 2);
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(
            !w.series(LeftColumn).points().empty() && !w.series(RightColumn).points().empty(), 20000);
        QTRY_VERIFY(w.column(LeftColumn)->lossChart()->rawPointCount(0) > 0);
        QTRY_VERIFY(w.column(RightColumn)->lossChart()->rawPointCount(0) > 0);

        // A live change of the worker count is applied and marked.
        w.panel()->workersSlider()->setValue(3);
        QCOMPARE(w.controller()->runningSettings().workers, 3);
        QTRY_VERIFY_WITH_TIMEOUT(
            !w.series(LeftColumn).markers().empty() && !w.series(RightColumn).markers().empty(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(LeftColumn).status().workers.size()), 3, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(RightColumn).status().workers.size()), 3, 10000);
        // Fewer workers: the bars, the timeline and the idle fraction follow the workers that exist.
        w.panel()->workersSlider()->setValue(1);
        for (const int m : {LeftColumn, RightColumn}) {
            QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(m).status().workers.size()), 1, 10000);
            QVERIFY(w.series(m).status().segmentStart > 0);
            w.column(m)->refresh();
            QCOMPARE(w.column(m)->workerChart()->workerCount(), 1);
            QCOMPARE(w.column(m)->timeline()->workers(), 1);
            QVERIFY(w.column(m)->workerChart()->valueAxisTitle().contains(QStringLiteral("since")));
        }
        // One worker waits for nobody: async's idle fraction since the change is small (sync's too, but it
        // still waits to be started).
        QTRY_VERIFY_WITH_TIMEOUT(w.series(RightColumn).status().idleFraction < 0.2, 10000);
        w.panel()->workersSlider()->setValue(3);
        QTRY_COMPARE_WITH_TIMEOUT(static_cast<int>(w.series(LeftColumn).status().workers.size()), 3, 10000);
        QTRY_VERIFY(w.column(LeftColumn)->lossChart()->markerLineCount() > 0);
        // A preset change needs a restart, and says so.
        QSignalSpy restart(w.controller(), &Controller::restartNeeded);
        w.panel()->seedBox()->setValue(7);
        QVERIFY(!restart.isEmpty());
        QCOMPARE(restart.last().front().toBool(), true);
        w.panel()->seedBox()->setValue(0);

        // Pause stops the growth.
        w.controller()->pause();
        QCOMPARE(w.controller()->state(), Controller::State::Paused);
        QTest::qWait(300); // what was staged before the pause arrives
        const auto paused = w.series(LeftColumn).received() + w.series(RightColumn).received();
        QTest::qWait(500);
        QCOMPARE(w.series(LeftColumn).received() + w.series(RightColumn).received(), paused);
        w.controller()->start(); // resume
        QTRY_VERIFY(w.series(LeftColumn).received() + w.series(RightColumn).received() > paused);

        // Reset clears them.
        w.controller()->reset();
        QVERIFY(w.series(LeftColumn).points().empty());
        QVERIFY(w.series(RightColumn).points().empty());
        QTest::qWait(200);
        QVERIFY(w.series(LeftColumn).points().empty()); // nothing from the old run arrives
        QCOMPARE(w.controller()->state(), Controller::State::Idle);
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 10000);
    }

    void randomUseNeverCrashesOrLeaks()
    {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        setParabola(w, 2);
        ControlPanel* p = w.panel();
        // Seeded, and the seed printed, so that a failure can be replayed (SGDSCOPE_TEST_SEED=N).
        const quint32 seed = qEnvironmentVariableIsSet("SGDSCOPE_TEST_SEED")
            ? static_cast<quint32>(qEnvironmentVariableIntValue("SGDSCOPE_TEST_SEED"))
            : QRandomGenerator::global()->generate();
        qInfo("random actions with SGDSCOPE_TEST_SEED=%u", seed);
        QRandomGenerator generator(seed);
        auto* rng = &generator;
        QList<QSlider*> sliders = {p->workersSlider(), p->batchSlider(), p->accumSlider(), p->learningRateSlider(),
            p->slowFactorSlider(), p->jitterSlider()};
        for (int i = 0; i < 300; ++i) {
            switch (rng->bounded(9)) {
            case 0:
                w.controller()->start();
                break;
            case 1:
                w.controller()->togglePause();
                break;
            case 2:
                w.controller()->reset();
                break;
            case 3:
                p->slowWorkerBox()->setCurrentIndex(rng->bounded(p->slowWorkerBox()->count()));
                break;
            case 4:
                p->targetBox()->setCurrentIndex(rng->bounded(p->targetBox()->count()));
                break;
            default: {
                QSlider* s = sliders[rng->bounded(sliders.size())];
                s->setValue(s->minimum() + rng->bounded(s->maximum() - s->minimum() + 1));
            }
            }
            QTest::qWait(static_cast<int>(rng->bounded(12)));
        }
        w.controller()->start();
        // It trains (or has already diverged at a learning rate the random actions chose), without error.
        QTRY_VERIFY_WITH_TIMEOUT(w.controller()->state() == Controller::State::Running
                || w.controller()->state() == Controller::State::Finished,
            20000);
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    void exportWritesRealPictures()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        setParabola(w, 2);
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(
            w.series(LeftColumn).points().size() > 100 && w.series(RightColumn).points().size() > 100, 20000);
        w.controller()->pause();
        w.refreshCharts();
        QTemporaryDir dir;
        const QStringList problems = w.exportCharts(dir.path());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        const QList<const Exportable*> charts = w.exportables();
        QCOMPARE(QDir(dir.path()).entryList({QStringLiteral("*.png")}).size(), charts.size() + 1);
        for (const Exportable* e : charts) {
            const QImage image(dir.filePath(e->exportName() + QStringLiteral(".png")));
            QVERIFY2(!image.isNull(), qPrintable(e->exportName()));
            const auto* widget = dynamic_cast<const QWidget*>(e);
            QCOMPARE(image.size(), widget->size() * 2); // twice the device pixel ratio
            const Ink ink = inkOf(image);
            QVERIFY2(ink.variance > 100, qPrintable(e->exportName() + QStringLiteral(" is blank")));
            QVERIFY2(ink.dark > 200, qPrintable(e->exportName() + QStringLiteral(" has no text")));
        }
        const QImage window(dir.filePath(QStringLiteral("window.png")));
        QCOMPARE(window.size(), w.size() * 2);
        QVERIFY(inkOf(window).variance > 100);
        // No temporary files are left.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), charts.size() + 1);
        w.controller()->reset();
    }

    void exportToAnUnwritableFolderFailsCleanly()
    {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("not-a-folder")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        QVERIFY(!w.exportCharts(dir.filePath(QStringLiteral("not-a-folder"))).isEmpty());
        QVERIFY(!w.exportCharts(QStringLiteral("/proc/sgdscope-no")).isEmpty());
        const QString error
            = savePng(w.column(LeftColumn)->lossChart()->renderImage(1.0), QStringLiteral("/proc/sgdscope.png"));
        QVERIFY(error.contains(QStringLiteral("/proc/sgdscope.png")));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), qsizetype(1));
    }

    void missingDataSetNamesTheDebianPackage()
    {
        // A folder without the files stands in for an uninstalled dataset-fashion-mnist.
        QTemporaryDir empty;
        qputenv("SGDSCOPE_FASHION_MNIST_DIR", empty.path().toUtf8());
        MainWindow w;
        SessionSettings s = w.panel()->settings();
        s.preset = QStringLiteral("fashion-mnist");
        w.panel()->setSettings(s);
        w.controller()->setSettings(w.panel()->settings());
        w.controller()->start();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->state(), Controller::State::Failed, 20000);
        QVERIFY2(w.lastError().contains(QStringLiteral("dataset-fashion-mnist")), qPrintable(w.lastError()));
        qunsetenv("SGDSCOPE_FASHION_MNIST_DIR");
    }

    void closingMidRunStopsTheThread()
    {
        auto* w = new MainWindow;
        w->show();
        setParabola(*w, 4);
        w->controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(!w->series(LeftColumn).points().empty(), 20000);
        QElapsedTimer t;
        t.start();
        w->close();
        delete w; // joins the training thread
        QVERIFY2(t.elapsed() < 5000, "closing took too long");
    }

    void progressLinesCarryEveryValue()
    {
        MetricsBatch b;
        b.ready = true;
        b.notes << QStringLiteral("a note");
        b.points[LeftColumn].push_back({3, 96, 0.25, 1.5, 0, 0.001});
        b.points[RightColumn].push_back({7, 224, 0.5, std::nan(""), 4, 0.0});
        b.evals[RightColumn].push_back({7, 224, 0.5, 0.75, 0.625, true, 0.8, 0.6});
        TimeBin bin;
        bin.worker = 2;
        bin.bin = 1234;
        bin.seconds[TimeBin::Compute] = 0.000625f;
        bin.seconds[TimeBin::Wait] = 0.000375f;
        b.timeline[LeftColumn].push_back(bin);
        b.markers[LeftColumn].push_back({3, 96, 0.25, QStringLiteral("P=4")});
        ModeStatus& st = b.status[RightColumn];
        st.valid = true;
        st.updates = 7;
        st.samples = 224;
        st.seconds = 0.5;
        st.virtualClock = true;
        st.meanStaleness = 2.5;
        st.meanLearningRate = 0.0125;
        st.targetAccuracy = 0.875;
        st.workers.push_back({1.0, 0.6, 0.3, 0.05, 0.04, 0.01, 3});
        st.stalenessCounts = {1, 2, 4};
        st.waitDecades = {0, 5};
        const std::string line = sgdscope::dumpJson(metricsBatchJson(b), -1);
        QVERIFY(line.find('\n') == std::string::npos); // one line
        const MetricsBatch r = metricsBatchFromJson(sgdscope::parseJson(line, "line"));
        QVERIFY(r.ready);
        QCOMPARE(r.notes, b.notes);
        QCOMPARE(r.points[LeftColumn].size(), std::size_t {1});
        QCOMPARE(r.points[LeftColumn][0].waitSeconds, 0.001);
        QVERIFY(std::isnan(r.points[RightColumn][0].loss)); // a diverged loss stays non-finite
        QCOMPARE(r.points[RightColumn][0].staleness, std::int64_t {4});
        QCOMPARE(r.evals[RightColumn][0].testAccuracy, 0.6);
        QCOMPARE(r.timeline[LeftColumn][0].worker, 2);
        QCOMPARE(r.timeline[LeftColumn][0].bin, std::int64_t {1234});
        QCOMPARE(r.timeline[LeftColumn][0].seconds[TimeBin::Compute], 0.000625f);
        QCOMPARE(r.markers[LeftColumn][0].text, QStringLiteral("P=4"));
        QVERIFY(!r.status[LeftColumn].valid);
        QVERIFY(r.status[RightColumn].virtualClock);
        QCOMPARE(r.status[RightColumn].targetAccuracy, 0.875);
        QCOMPARE(r.status[RightColumn].meanLearningRate, 0.0125);
        QCOMPARE(r.status[RightColumn].targetLoss, -1.0);
        QCOMPARE(r.status[RightColumn].workers.size(), std::size_t {1});
        QCOMPARE(r.status[RightColumn].workers[0].transfer, 0.04);
        QCOMPARE(r.status[RightColumn].stalenessCounts, b.status[RightColumn].stalenessCounts);
        // A broken line is refused with a message, not taken half.
        QVERIFY_THROWS_EXCEPTION(std::exception, metricsBatchFromJson(sgdscope::parseJson(R"({"type":"batch"})", "x")));
    }

    // The window's settings reach a session child and back with the columns' modes and knobs, and the knobs'
    // defaults are the run options' (declared in two places: this catches them drifting apart).
    void sessionSettingsCarryTheColumnsModes()
    {
        const sgdscope::RunConfig config;
        const ColumnModes defaults;
        QCOMPARE(defaults.sspBound, static_cast<int>(config.sspBound));
        QCOMPARE(defaults.backupWorkers, config.backupWorkers);
        QCOMPARE(defaults.localSteps, config.localSteps);
        QCOMPARE(defaults.dcLambda, config.dcLambda);
        QCOMPARE(defaults.names[LeftColumn], QString::fromUtf8(sgdscope::modeName(config.modes.at(0))));
        QCOMPARE(defaults.names[RightColumn], QString::fromUtf8(sgdscope::modeName(config.modes.at(1))));
        SessionSettings s;
        s.modes.names = {QStringLiteral("ssp"), QStringLiteral("backup")};
        s.modes.sspBound = 7;
        s.modes.backupWorkers = 2;
        s.modes.localSteps = 5;
        s.modes.dcLambda = 0.25;
        s.pushLearningRate = QStringLiteral("staleness");
        const std::string line = sgdscope::dumpJson(sessionSettingsJson(s), -1);
        const SessionSettings r = sessionSettingsFromJson(sgdscope::parseJson(line, "line"));
        QVERIFY(r.modes == s.modes);
        QCOMPARE(r.pushLearningRate, QStringLiteral("staleness"));
        // The push learning rate is live too (an MPI job's settings all need a new job).
        SessionSettings constant = s;
        constant.pushLearningRate = QStringLiteral("constant");
        QVERIFY(constant.trainsDifferentlyFrom(s) && !constant.needsRestartComparedTo(s));
        SessionSettings mpi = s;
        mpi.engine = QStringLiteral("mpi");
        SessionSettings mpiConstant = mpi;
        mpiConstant.pushLearningRate = QStringLiteral("scaled");
        QVERIFY(mpiConstant.needsRestartComparedTo(mpi));
        // A knob is a live change; a column's mode needs a new run.
        SessionSettings knob = s;
        knob.modes.sspBound = 0;
        QVERIFY(knob.trainsDifferentlyFrom(s) && !knob.needsRestartComparedTo(s));
        SessionSettings swapped = s;
        std::swap(swapped.modes.names[LeftColumn], swapped.modes.names[RightColumn]);
        QVERIFY(swapped.needsRestartComparedTo(s));
    }

    // An MPI job of one process streams only the column it can run: its first stream column goes where the
    // window shows that mode.
    void externalColumnsGoWhereTheWindowShowsThem()
    {
        MetricsBatch b;
        b.points[LeftColumn].push_back({3, 96, 0.25, 1.5, 0, 0.001});
        b.status[LeftColumn].valid = true;
        b.status[LeftColumn].updates = 3;
        b.notes << QStringLiteral("kept");
        moveColumns(b, {RightColumn});
        QVERIFY(b.points[LeftColumn].empty() && !b.status[LeftColumn].valid);
        QCOMPARE(b.points[RightColumn].size(), std::size_t {1});
        QCOMPARE(b.status[RightColumn].updates, std::int64_t {3});
        QCOMPARE(b.notes, QStringList {QStringLiteral("kept")});
    }

    void simulatedClusterRunsInAChildAndTakesLiveChanges()
    {
#if defined(__SANITIZE_THREAD__) || (defined(__has_feature) && __has_feature(thread_sanitizer))
        QSKIP("ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process; this test is not about threads");
#endif
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
#if defined(__SANITIZE_THREAD__) || (defined(__has_feature) && __has_feature(thread_sanitizer))
        QSKIP("ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process; this test is not about threads");
#endif
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

    void openRunShowsAFinishedRunFolder()
    {
#if defined(__SANITIZE_THREAD__) || (defined(__has_feature) && __has_feature(thread_sanitizer))
        QSKIP("ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process; this test is not about threads");
#endif
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(SGDSCOPE_BINARY),
            {QStringLiteral("--headless"), QStringLiteral("--out"), dir.path(), QStringLiteral("--preset"),
                QStringLiteral("blobs"), QStringLiteral("--workers"), QStringLiteral("3"), QStringLiteral("--steps"),
                QStringLiteral("40")});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
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
        QProcess withTarget;
        withTarget.start(QStringLiteral(SGDSCOPE_BINARY),
            {QStringLiteral("--headless"), QStringLiteral("--out"), targetDir.path(), QStringLiteral("--preset"),
                QStringLiteral("blobs"), QStringLiteral("--steps"), QStringLiteral("40"),
                QStringLiteral("--target-accuracy"), QStringLiteral("0.5")});
        QVERIFY(withTarget.waitForFinished(120000));
        QCOMPARE(withTarget.exitCode(), 0);
        QCOMPARE(w.openRun(targetDir.path()), QString());
        QCOMPARE(w.accuracyChart()->targetDrawn(), 0.5);
        for (int m = 0; m < modeCount; ++m) {
            QCOMPARE(w.series(m).status().targetAccuracy, 0.5);
            QVERIFY(w.series(m).status().targetReached);
        }
        // A simulated run's folder: its virtual seconds are read as such.
        QTemporaryDir simDir;
        QProcess sim;
        sim.start(QStringLiteral(SGDSCOPE_BINARY),
            {QStringLiteral("--headless"), QStringLiteral("--out"), simDir.path(), QStringLiteral("--preset"),
                QStringLiteral("blobs"), QStringLiteral("--engine"), QStringLiteral("sim"), QStringLiteral("--workers"),
                QStringLiteral("16"), QStringLiteral("--steps"), QStringLiteral("20")});
        QVERIFY(sim.waitForFinished(120000));
        QCOMPARE(sim.exitCode(), 0);
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

    void headlessChartsExistAndDecode()
    {
#if defined(__SANITIZE_THREAD__) || (defined(__has_feature) && __has_feature(thread_sanitizer))
        QSKIP("ThreadSanitizer (LLVM 14) cannot follow a fork from a threaded process; this test is not about threads");
#endif
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(SGDSCOPE_BINARY),
            {QStringLiteral("--headless"), QStringLiteral("--out"), dir.path(), QStringLiteral("--workers"),
                QStringLiteral("2"), QStringLiteral("--slow"), QStringLiteral("1:3")});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        for (const char* name : {"loss.png", "idle.png", "staleness.png", "comparison.png"}) {
            const QImage image(dir.filePath(QLatin1String(name)));
            QVERIFY2(!image.isNull(), name);
            QVERIFY(image.width() > 800);
            QVERIFY2(inkOf(image).variance > 100, name);
        }
    }
};

QTEST_MAIN(TestUi)
#include "test_ui.moc"
