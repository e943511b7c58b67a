#include "ui/charts/RunCharts.h"

#include "ui/charts/LossChart.h"
#include "ui/charts/StalenessCharts.h"
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
        QList<QWidget*> panels;
        QList<std::pair<StalenessHistogramChart*, const ModeSeries*>> histograms;
        StalenessTrendChart* trend = nullptr;
        for (std::size_t m = 0; m < 2; ++m) {
            if (!modes[m]->status().valid)
                continue;
            auto* c = new StalenessHistogramChart(QObject::tr("%1 staleness").arg(names[m]), QString(), colors[m]);
            histograms.append({c, modes[m]});
            panels << c;
        }
        if (async.status().valid) {
            trend = new StalenessTrendChart(QObject::tr("Async mean staleness"), QString(), &async);
            panels << trend;
        }
        if (!panels.isEmpty())
            record(saveRow(
                panels,
                [&] {
                    for (auto& [c, s] : histograms)
                        c->setCounts(s->status().stalenessCounts);
                    if (trend)
                        trend->refresh(std::max(1, static_cast<int>(async.status().workers.size())));
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
