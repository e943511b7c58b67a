#include "ui/ModeColumn.h"

#include "ui/charts/LossChart.h"
#include "ui/charts/StalenessCharts.h"
#include "ui/charts/TimelineStrip.h"
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
    const bool sync = mode == SyncMode;
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
            ? tr("Share of the wall time each worker spent computing, waiting for the slowest worker, and combining "
                 "gradients and applying the update.")
            : tr("Share of the wall time each worker spent computing, waiting for the lock or a snapshot, and "
                 "applying its gradient."));
    m_timeline = new TimelineStrip(tr("%1 timeline").arg(name), stem + QStringLiteral("-timeline"), series);
    m_histogram = new StalenessHistogramChart(tr("%1 staleness").arg(name), stem + QStringLiteral("-staleness"), color);
    m_histogram->setToolTip(
        tr("How many updates other workers applied between a gradient's read of the parameters and its own "
           "apply (always 0 in sync)."));
    m_trend
        = new StalenessTrendChart(tr("%1 mean staleness").arg(name), stem + QStringLiteral("-staleness-trend"), series);
    m_trend->setToolTip(
        tr("Mean staleness over this mode's clock; P \u2212 1 is what P equally fast workers average."));

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
    m_workers->setWorkers(status.workers);
    m_histogram->setCounts(status.stalenessCounts);
    m_trend->refresh(m_mode == SyncMode ? 1 : workers);
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
