#include "ui/charts/WorkerBarsChart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QLegend>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <cmath>

namespace sgdscope::ui {

WorkerBarsChart::WorkerBarsChart(const QString& title, const QString& exportName, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_busy(new QBarSet(tr("busy")))
    , m_idle(new QBarSet(tr("idle")))
    , m_apply(new QBarSet(tr("combine/apply")))
    , m_transfer(new QBarSet(tr("copy")))
    , m_categories(new QBarCategoryAxis)
    , m_value(new QValueAxis)
{
    m_busy->setColor(palette::busy());
    m_idle->setColor(palette::idle());
    m_apply->setColor(palette::apply());
    m_transfer->setColor(palette::transfer());
    for (QBarSet* set : {m_busy, m_idle, m_apply, m_transfer})
        set->setBorderColor(Qt::transparent);
    auto* series = new QStackedBarSeries;
    series->append({m_busy, m_idle, m_apply, m_transfer});
    series->setBarWidth(0.8);
    m_chart->addSeries(series);
    styleAxis(m_categories, tr("worker"));
    styleAxis(m_value, QString());
    m_value->setRange(0, 100);
    m_value->setTickCount(6);
    m_value->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(m_categories, Qt::AlignBottom);
    m_chart->addAxis(m_value, Qt::AlignLeft);
    series->attachAxis(m_categories);
    series->attachAxis(m_value);
    setWorkers(std::vector<WorkerTime>(1));
}

QString WorkerBarsChart::valueAxisTitle() const
{
    return m_since > 0 ? tr("% of its wall time since %1 s").arg(m_since, 0, 'g', 3) : tr("% of its wall time");
}

void WorkerBarsChart::setWorkers(const std::vector<WorkerTime>& workers, double since)
{
    if (since != m_since) {
        m_since = since;
        const QString title = valueAxisTitle();
        m_value->setProperty("sgdscopeTitle", title);
        m_value->setTitleText(height() >= 130 ? title : QString());
    }
    const int n = static_cast<int>(workers.size());
    if (n != m_count) {
        QStringList names;
        // Label every worker while there is room, else every fourth.
        const int step = n > 16 ? 4 : 1;
        for (int w = 0; w < n; ++w)
            names << (w % step == 0 ? QString::number(w) : QString(w, QLatin1Char(' ')));
        m_categories->clear();
        m_categories->append(names);
        for (QBarSet* set : {m_busy, m_idle, m_apply, m_transfer}) {
            if (set->count() > n)
                set->remove(n, set->count() - n);
            while (set->count() < n)
                set->append(0.0);
        }
        m_count = n;
    }
    for (int w = 0; w < n; ++w) {
        const WorkerTime& t = workers[static_cast<std::size_t>(w)];
        // Each bar is the worker's own wall time over the stretch shown (for the current team the same for
        // every worker): the shares of its measured spans.
        const double scale = t.wall > 0 ? 100.0 / t.wall : 0.0;
        // Each replace() re-lays out the series: only for values that moved (a hundredth of a percent).
        for (auto [set, value] : {std::pair {m_busy, t.busy * scale}, std::pair {m_idle, t.idle * scale},
                 std::pair {m_apply, t.apply * scale}, std::pair {m_transfer, t.transfer * scale}}) {
            if (std::abs(set->at(w) - value) > 0.01)
                set->replace(w, value);
        }
    }
}

} // namespace sgdscope::ui
