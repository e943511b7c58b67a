#include "ui/ModeColumn.h"

#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TimelineStrip.h"
#include "ui/charts/TrendChart.h"
#include "ui/charts/WorkerBarsChart.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace sgdscope::ui {

ModeColumn::ModeColumn(int mode, const ModeSeries* series, QWidget* parent)
    : QWidget(parent)
    , m_mode(mode)
    , m_series(series)
{
    const bool sync = mode == LeftColumn;
    const QString name = sync ? tr("Sync") : tr("Async");
    const QString stem = sync ? QStringLiteral("sync") : QStringLiteral("async");
    const QColor color = sync ? palette::sync() : palette::async();

    m_heading = new QLabel(this);
    m_heading->setTextFormat(Qt::RichText);
    m_heading->setText(
        QStringLiteral("<b style='color:%1; font-size:large'>%2</b> &nbsp;<span style='color:#555'>%3</span>")
            .arg(color.name(), name,
                sync ? tr("one update per batch; everybody waits for the slowest worker")
                     : tr("every worker applies at once; nobody waits, gradients are stale")));
    m_heading->setWordWrap(true);

    m_loss = new LossChart(
        tr("%1 loss").arg(name), stem + QStringLiteral("-loss"), {{series, color, name}}, XAxisKind::Samples);
    m_loss->setToolTip(
        tr("Loss of each batch (faint), its smoothing (bold) and the loss on the whole training set (dots); "
           "dashed lines mark configuration changes."));
    m_workers = new WorkerBarsChart(tr("%1 worker time").arg(name), stem + QStringLiteral("-workers"));
    m_workers->setToolTip(sync
            ? tr("Share of each current worker's wall time (since the run began or the last change of settings) "
                 "spent computing, waiting for the slowest worker, and combining gradients and applying the update.")
            : tr("Share of each current worker's wall time (since the run began or the last change of settings) "
                 "spent computing, waiting for the lock or at a slice's end, applying its gradient (with momentum) "
                 "and copying the parameters."));
    m_timeline = new TimelineStrip(tr("%1 timeline").arg(name), stem + QStringLiteral("-timeline"), series);
    if (sync) {
        m_histogram = new HistogramChart(tr("Sync wait per update"), stem + QStringLiteral("-wait"), color,
            tr("longest wait in an update (seconds, by decade)"), tr("updates"));
        m_histogram->setToolTip(
            tr("Sync's price: in every update, how long the worker that waited longest waited for the slowest one "
               "(by decade: 1m means 1 to 10 ms). It includes the team's start and join, and with passive "
               "OpenMP waiting the wake-up of sleeping threads."));
        m_trend = new TrendChart(tr("Sync mean wait per update"), stem + QStringLiteral("-wait-trend"), series,
            TrendValue::WaitSeconds, color);
        m_trend->setToolTip(tr("The mean of that wait over this mode's clock."));
    } else {
        m_histogram = new HistogramChart(
            tr("Async staleness"), stem + QStringLiteral("-staleness"), color, tr("staleness (updates)"), tr("pushes"));
        m_histogram->setToolTip(
            tr("Async's price: how many updates other workers applied between a gradient's read of the parameters "
               "and its own apply."));
        m_trend = new TrendChart(tr("Async mean staleness"), stem + QStringLiteral("-staleness-trend"), series,
            TrendValue::Staleness, color);
        m_trend->setToolTip(
            tr("Mean staleness over this mode's clock; P \u2212 1 is what P equally fast workers average."));
    }

    auto row = [](QWidget* a, QWidget* b) {
        auto* s = new QSplitter(Qt::Horizontal);
        s->addWidget(a);
        s->addWidget(b);
        s->setChildrenCollapsible(false);
        s->setSizes({1000, 1000});
        return s;
    };
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_loss);
    splitter->addWidget(row(m_workers, m_timeline));
    splitter->addWidget(row(m_histogram, m_trend));
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setStretchFactor(2, 2);
    // Initial proportions (the charts' own size hints depend on their scenes and are no guide).
    splitter->setSizes({3000, 2000, 2000});
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    layout->addWidget(m_heading);
    layout->addWidget(splitter, 1);
}

void ModeColumn::refresh(bool everything)
{
    const ModeStatus& status = m_series->status();
    const int workers = std::max(1, static_cast<int>(status.workers.size()));
    m_loss->refresh();
    m_timeline->setWorkers(workers);
    m_timeline->update();
    if (!everything)
        return;
    m_workers->setWorkers(status.workers, status.segmentStart);
    if (m_mode == LeftColumn) {
        const auto [labels, counts] = waitBars(status.waitDecades);
        m_histogram->setBins(labels, counts);
        m_trend->refresh();
    } else {
        // As many bars as have room for a label (about 22 pixels each), at most 16.
        const int room = static_cast<int>(m_histogram->chartItem()->plotArea().width() / 22);
        const auto [labels, counts]
            = stalenessBars(status.stalenessCounts, status.stalenessTailFolded, std::min(16, room));
        m_histogram->setBins(labels, counts);
        m_trend->refresh(workers - 1);
    }
}

void ModeColumn::setShowTestSet(bool test)
{
    m_loss->setShowTestSet(test);
}

void ModeColumn::setXAxis(XAxisKind kind)
{
    m_loss->setXAxis(kind);
}

QList<const Exportable*> ModeColumn::exportables() const
{
    return {m_loss, m_workers, m_timeline, m_histogram, m_trend};
}

} // namespace sgdscope::ui
