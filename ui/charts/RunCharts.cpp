#include "ui/charts/RunCharts.h"

#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TrendChart.h"
#include "ui/charts/WorkerBarsChart.h"

#include <QApplication>
#include <QDir>
#include <QHBoxLayout>
#include <QPainter>
#include <QWidget>

namespace sgdscope::ui {

namespace {
/// Lays out `panels` side by side off screen, lets `refresh` fill them, and saves the row as one PNG.
QString saveRow(const QList<QWidget*>& panels, const std::function<void()>& refresh, const QString& path)
{
    QWidget row;
    row.setAttribute(Qt::WA_DontShowOnScreen);
    auto* layout = new QHBoxLayout(&row);
    layout->setContentsMargins(6, 6, 6, 6);
    for (QWidget* w : panels)
        layout->addWidget(w);
    row.resize(560 * static_cast<int>(panels.size()), 420);
    row.show();
    QApplication::processEvents(); // layout: the plot areas get their size
    refresh();
    QApplication::processEvents();
    QImage image(row.size() * 2, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(2.0);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        row.render(&painter);
    }
    return savePng(image, path);
}
} // namespace

QStringList writeRunCharts(const QString& folder, const ModeSeries& sync, const ModeSeries& async)
{
    const QDir dir(folder);
    QStringList problems;
    auto record = [&](const QString& error) {
        if (!error.isEmpty())
            problems << error;
    };
    const std::array<const ModeSeries*, 2> modes = {&sync, &async};
    const std::array<QString, 2> names = {QObject::tr("Sync"), QObject::tr("Async")};
    const std::array<QColor, 2> colors = {palette::sync(), palette::async()};

    {
        QList<QWidget*> panels;
        QList<LossChart*> charts;
        for (std::size_t m = 0; m < 2; ++m) {
            if (modes[m]->points().empty())
                continue;
            auto* c = new LossChart(
                QObject::tr("%1 loss").arg(names[m]), QString(), {{modes[m], colors[m], names[m]}}, XAxisKind::Samples);
            charts << c;
            panels << c;
        }
        if (!panels.isEmpty())
            record(saveRow(
                panels,
                [&] {
                    for (LossChart* c : charts)
                        c->refresh();
                },
                dir.filePath(QStringLiteral("loss.png"))));
    }
    {
        QList<QWidget*> panels;
        QList<std::pair<WorkerBarsChart*, const ModeSeries*>> charts;
        for (std::size_t m = 0; m < 2; ++m) {
            if (!modes[m]->status().valid)
                continue;
            auto* c = new WorkerBarsChart(QObject::tr("%1 worker time").arg(names[m]), QString());
            charts.append({c, modes[m]});
            panels << c;
        }
        if (!panels.isEmpty())
            record(saveRow(
                panels,
                [&] {
                    for (auto& [c, s] : charts)
                        c->setWorkers(s->status().workers);
                },
                dir.filePath(QStringLiteral("idle.png"))));
    }
    {
        // Each mode's price: sync's wait per update, async's staleness; each as a histogram and over time.
        QList<QWidget*> panels;
        QList<std::function<void()>> fill;
        if (sync.status().valid) {
            auto* histogram = new HistogramChart(QObject::tr("Sync wait per update"), QString(), colors[0],
                QObject::tr("longest wait in an update (seconds, by decade)"), QObject::tr("updates"));
            auto* trend = new TrendChart(
                QObject::tr("Sync mean wait per update"), QString(), &sync, TrendValue::WaitSeconds, colors[0]);
            panels << histogram << trend;
            fill << [histogram, trend, &sync] {
                const auto [labels, counts] = waitBars(sync.status().waitDecades);
                histogram->setBins(labels, counts);
                trend->refresh();
            };
        }
        if (async.status().valid) {
            auto* histogram = new HistogramChart(QObject::tr("Async staleness"), QString(), colors[1],
                QObject::tr("staleness (updates)"), QObject::tr("pushes"));
            auto* trend = new TrendChart(
                QObject::tr("Async mean staleness"), QString(), &async, TrendValue::Staleness, colors[1]);
            panels << histogram << trend;
            fill << [histogram, trend, &async] {
                const auto [labels, counts]
                    = stalenessBars(async.status().stalenessCounts, async.status().stalenessTailFolded, 16);
                histogram->setBins(labels, counts);
                trend->refresh(std::max(1, static_cast<int>(async.status().workers.size())) - 1);
            };
        }
        if (!panels.isEmpty())
            record(saveRow(
                panels,
                [&] {
                    for (const auto& f : fill)
                        f();
                },
                dir.filePath(QStringLiteral("staleness.png"))));
    }
    {
        QList<LossChart::Curve> curves;
        for (std::size_t m = 0; m < 2; ++m) {
            if (!modes[m]->points().empty())
                curves.append({modes[m], colors[m], names[m].toLower()});
        }
        if (!curves.isEmpty()) {
            auto* bySamples
                = new LossChart(QObject::tr("Loss against samples seen"), QString(), curves, XAxisKind::Samples);
            auto* bySeconds = new LossChart(QObject::tr("Loss against seconds"), QString(), curves, XAxisKind::Seconds);
            record(saveRow(
                {bySamples, bySeconds},
                [&] {
                    bySamples->refresh();
                    bySeconds->refresh();
                },
                dir.filePath(QStringLiteral("comparison.png"))));
        }
    }
    return problems;
}

} // namespace sgdscope::ui
