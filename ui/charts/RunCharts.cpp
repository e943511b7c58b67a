#include "ui/charts/RunCharts.h"

#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TrendChart.h"
#include "ui/charts/WorkerBarsChart.h"

#include <QApplication>
#include <QDir>
#include <QGridLayout>
#include <QPainter>
#include <QWidget>

namespace sgdscope::ui {

namespace {
/// Lays out `panels` off screen in rows of at most `columns` (each panel `width` pixels wide, 420 high), lets
/// `refresh` fill them, and saves the picture as one PNG.
QString saveGrid(
    const QList<QWidget*>& panels, int columns, int width, const std::function<void()>& refresh, const QString& path)
{
    QWidget grid;
    grid.setAttribute(Qt::WA_DontShowOnScreen);
    auto* layout = new QGridLayout(&grid);
    layout->setContentsMargins(6, 6, 6, 6);
    for (int i = 0; i < panels.size(); ++i)
        layout->addWidget(panels[i], i / columns, i % columns);
    const int shownColumns = std::min(columns, static_cast<int>(panels.size()));
    const int rows = (static_cast<int>(panels.size()) + columns - 1) / columns;
    grid.resize(width * shownColumns, 420 * rows);
    grid.show();
    QApplication::processEvents(); // layout: the plot areas get their size
    refresh();
    QApplication::processEvents();
    QImage image(grid.size() * 2, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        return savePng(image, path); // out of memory, said there
    image.setDevicePixelRatio(2.0);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        grid.render(&painter);
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
            record(saveGrid(
                panels, 3, 560,
                [&] {
                    for (LossChart* c : charts)
                        c->refresh();
                },
                dir.filePath(QStringLiteral("loss.png"))));
    }
    if (!problems.isEmpty())
        return problems; // (a full disk would fail every later file for the same reason)
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
            record(saveGrid(
                panels, 3, 560,
                [&] {
                    for (auto& [c, s] : charts)
                        c->setWorkers(s->status().workers);
                },
                dir.filePath(QStringLiteral("idle.png"))));
    }
    if (!problems.isEmpty())
        return problems;
    {
        // Each mode's price: a sync-like mode's wait per update, an async-like one's staleness, and ssp's both
        // (staleness, and how long its bound held each push); each as a histogram and over time.
        QList<QWidget*> panels;
        QList<std::function<void()>> fill;
        const auto addWaits = [&](const ChartedMode& m, bool perPush) {
            const ModeSeries* series = m.series;
            auto* histogram = new HistogramChart(
                (perPush ? QObject::tr("%1 wait at its bound") : QObject::tr("%1 wait per update")).arg(m.name),
                QString(), m.color,
                perPush ? QObject::tr("held before a push (seconds, by decade)")
                        : QObject::tr("longest wait (seconds, by decade)"),
                perPush ? QObject::tr("pushes") : QObject::tr("updates"));
            auto* trend = new TrendChart(
                (perPush ? QObject::tr("%1 mean wait at its bound") : QObject::tr("%1 mean wait per update"))
                    .arg(m.name),
                QString(), series, TrendValue::WaitSeconds, m.color);
            if (perPush)
                trend->setMeanName(QObject::tr("mean wait at the bound per push"));
            panels << histogram << trend;
            fill << [histogram, trend, series] {
                const auto [labels, counts] = waitBars(series->status().waitDecades);
                histogram->setBins(labels, counts);
                trend->refresh();
            };
        };
        for (const ChartedMode& m : modes) {
            if (!m.series->status().valid)
                continue;
            const ModeSeries* series = m.series;
            if (m.syncLike) {
                addWaits(m, false);
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
                if (m.boundWaits)
                    addWaits(m, true);
            }
        }
        if (!panels.isEmpty())
            record(saveGrid(
                panels, 4, 560, // a mode's histogram and trend side by side, two modes a row
                [&] {
                    for (const auto& f : fill)
                        f();
                },
                dir.filePath(QStringLiteral("staleness.png"))));
    }
    if (!problems.isEmpty())
        return problems;
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
            record(saveGrid(
                {bySamples, bySeconds}, curves.size() > 3 ? 1 : 2,
                curves.size() > 3 ? 1120 : 560, // room for the legend
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
