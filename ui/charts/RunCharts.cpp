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

QStringList writeRunCharts(const QString& folder, const std::vector<ChartedMode>& modes)
{
    const QDir dir(folder);
    QStringList problems;
    auto record = [&](const QString& error) {
        if (!error.isEmpty())
            problems << error;
    };

    {
        QList<QWidget*> panels;
        QList<LossChart*> charts;
        for (const ChartedMode& m : modes) {
            if (m.series->points().empty())
                continue;
            auto* c = new LossChart(
                QObject::tr("%1 loss").arg(m.name), QString(), {{m.series, m.color, m.name}}, XAxisKind::Samples);
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
        for (const ChartedMode& m : modes) {
            if (!m.series->status().valid)
                continue;
            auto* c = new WorkerBarsChart(QObject::tr("%1 worker time").arg(m.name), QString());
            charts.append({c, m.series});
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
        // Each mode's price: a sync-like mode's wait per update, an async-like one's staleness; each as a
        // histogram and over time.
        QList<QWidget*> panels;
        QList<std::function<void()>> fill;
        for (const ChartedMode& m : modes) {
            if (!m.series->status().valid)
                continue;
            const ModeSeries* series = m.series;
            if (m.syncLike) {
                auto* histogram = new HistogramChart(QObject::tr("%1 wait per update").arg(m.name), QString(), m.color,
                    QObject::tr("longest wait in an update (seconds, by decade)"), QObject::tr("updates"));
                auto* trend = new TrendChart(QObject::tr("%1 mean wait per update").arg(m.name), QString(), series,
                    TrendValue::WaitSeconds, m.color);
                panels << histogram << trend;
                fill << [histogram, trend, series] {
                    const auto [labels, counts] = waitBars(series->status().waitDecades);
                    histogram->setBins(labels, counts);
                    trend->refresh();
                };
            } else {
                auto* histogram = new HistogramChart(QObject::tr("%1 staleness").arg(m.name), QString(), m.color,
                    QObject::tr("staleness (updates)"), QObject::tr("pushes"));
                auto* trend = new TrendChart(
                    QObject::tr("%1 mean staleness").arg(m.name), QString(), series, TrendValue::Staleness, m.color);
                panels << histogram << trend;
                fill << [histogram, trend, series] {
                    const auto [labels, counts]
                        = stalenessBars(series->status().stalenessCounts, series->status().stalenessTailFolded, 16);
                    histogram->setBins(labels, counts);
                    trend->refresh(std::max(1, static_cast<int>(series->status().workers.size())) - 1);
                };
            }
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
        for (const ChartedMode& m : modes) {
            if (!m.series->points().empty())
                curves.append({m.series, m.color, m.name.toLower()});
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
