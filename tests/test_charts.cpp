// The window's charts and the data behind them, without a window: worker bars say who made whom wait, a long run's
// curve is thinned evenly, a diverged curve ends at its last finite point, a loss that blew up keeps a readable
// axis, histograms bin what they hold and fold their tail into the last bar.
#include "ui/PointConversion.h"
#include "ui/SeriesStore.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/WorkerBarsChart.h"

#include "core/metrics/RunMetrics.h"
#include "core/run/Experiment.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <QTest>

using namespace sgdscope::ui;

class TestCharts : public QObject
{
    Q_OBJECT
private slots:
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

    // A long run keeps an evenly thinned curve: the early part as dense as the late part.
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
        // Two workers, one push 300 updates stale (its worker was preempted): the bars stay 0, 1, 2 and a tail with
        // it, not four bins of 100 with every other push in the first.
        std::vector<std::int64_t> outlier(301, 0);
        outlier[0] = 1000;
        outlier[1] = 500;
        outlier[300] = 1;
        const auto [outlierLabels, outlierCounts] = stalenessBars(outlier, false, 16);
        QCOMPARE(outlierLabels,
            (QStringList {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3+")}));
        QCOMPARE(outlierCounts, (std::vector<std::int64_t> {1000, 500, 0, 1}));
        // More than half a percent past the rest is not an outlier: the bins cover it.
        outlier[300] = 10;
        QCOMPARE(stalenessBars(outlier, false, 16).first.back(), QStringLiteral("300-319"));
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

    // Whether a histogram's labels fit their bars follows the plot's width and the labels' own width (the staleness
    // chart takes fewer, wider bins until they do).
    void histogramLabelsFitByWidth()
    {
        HistogramChart chart(QStringLiteral("Staleness"), QStringLiteral("staleness"), Qt::darkGreen,
            QStringLiteral("staleness (updates)"), QStringLiteral("pushes"));
        QStringList wide;
        for (int b = 0; b < 15; ++b)
            wide << QStringLiteral("%1-%2").arg(990 + 5 * b).arg(994 + 5 * b);
        const QStringList narrow {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3")};
        chart.resize(1600, 300);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_VERIFY(chart.labelsFit(wide));
        chart.resize(400, 300);
        QTRY_VERIFY(!chart.labelsFit(wide));
        QVERIFY(chart.labelsFit(narrow));
        QStringList longer = narrow;
        longer[2] = QStringLiteral("a label far too long for a quarter of the plot");
        QVERIFY(!chart.labelsFit(longer));
        QVERIFY(chart.labelsFit({}));
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
