#include "ui/charts/WorkerBarsChart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCursor>
#include <QLegend>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

WorkerBarsChart::WorkerBarsChart(const QString& title, const QString& exportName, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_busy(new QBarSet(tr("busy")))
    , m_idle(new QBarSet(tr("idle")))
    , m_apply(new QBarSet(tr("combine/apply")))
    , m_transfer(new QBarSet(tr("copy/send")))
    , m_unaccounted(new QBarSet(tr("unaccounted")))
    , m_categories(new QBarCategoryAxis)
    , m_value(new QValueAxis)
{
    m_busy->setColor(palette::busy());
    m_idle->setColor(palette::idle());
    m_apply->setColor(palette::apply());
    m_transfer->setColor(palette::transfer());
    m_unaccounted->setColor(palette::unaccounted());
    for (QBarSet* set : {m_busy, m_idle, m_apply, m_transfer, m_unaccounted})
        set->setBorderColor(Qt::transparent);
    // Hovering a bar names its worker: its shares, its own waits and the others' waits named after it.
    for (QBarSet* set : {m_busy, m_idle, m_apply, m_transfer, m_unaccounted}) {
        // The bar's text replaces the chart's own tooltip while the mouse is on it (the widget's tooltip is what
        // Qt shows when the mouse rests).
        connect(set, &QBarSet::hovered, this, [this](bool status, int index) {
            if (!status || index < 0 || static_cast<std::size_t>(index) >= m_shown.size()) {
                if (!m_chartToolTip.isNull())
                    setToolTip(m_chartToolTip);
                m_chartToolTip.clear();
                return;
            }
            if (m_chartToolTip.isNull())
                m_chartToolTip = toolTip().isNull() ? QStringLiteral("") : toolTip();
            const QString text = barText(index);
            setToolTip(text);
            QToolTip::showText(QCursor::pos(), text, this);
        });
    }
    auto* series = new QStackedBarSeries;
    series->append({m_busy, m_idle, m_apply, m_transfer, m_unaccounted});
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
    setToolTip(tr("Each worker's wall time: busy (computing and injected straggler delay), idle (waiting for the "
                  "others, the parameter server or a message on the wire), combining or applying the update, "
                  "copying or sending (threads copy the parameters; in an MPI job rank 0 broadcasts them every sync "
                  "update and counts the time until the others have taken them, and every rank sends its "
                  "gradient), and unaccounted time."));
}

QString WorkerBarsChart::barText(int bar) const
{
    if (bar < 0 || static_cast<std::size_t>(bar) >= m_shown.size())
        return {};
    const WorkerTime& t = m_shown[static_cast<std::size_t>(bar)];
    const double share = t.wall > 0 ? 100.0 / t.wall : 0.0;
    return tr("worker %1: busy %2%, idle %3% (it waited %4 s)\nmade others wait %5 s (their waits for it, summed)")
        .arg(t.worker)
        .arg(t.busy * share, 0, 'f', 1)
        .arg(t.idle * share, 0, 'f', 1)
        .arg(t.idle, 0, 'g', 3)
        .arg(t.madeOthersWait, 0, 'g', 3);
}

QString WorkerBarsChart::valueAxisTitle() const
{
    return m_since > 0 ? tr("% of its wall time since %1 s").arg(m_since, 0, 'g', 3) : tr("% of its wall time");
}

void WorkerBarsChart::setWorkers(const std::vector<WorkerTime>& all, double since)
{
    if (since != m_since) {
        m_since = since;
        const QString title = valueAxisTitle();
        m_value->setProperty("sgdscopeTitle", title);
        m_value->setTitleText(height() >= 130 ? title : QString());
    }
    // Up to maxWorkerBars workers get a bar each; more are shown as a distribution: the workers at the
    // minimum, every tenth percentile and the maximum of idle time (each bar the whole of that worker's time),
    // so that 1,024 workers read as clearly as 4.
    const bool distribution = all.size() > static_cast<std::size_t>(maxWorkerBars);
    std::vector<WorkerTime> workers = all;
    for (std::size_t w = 0; w < workers.size(); ++w)
        workers[w].worker = static_cast<int>(w);
    if (distribution) {
        auto idleShare = [](const WorkerTime& t) { return t.wall > 0 ? t.idle / t.wall : 0.0; };
        std::sort(workers.begin(), workers.end(),
            [&](const WorkerTime& a, const WorkerTime& b) { return idleShare(a) < idleShare(b); });
        std::vector<WorkerTime> quantiles;
        for (int q = 0; q <= 10; ++q)
            quantiles.push_back(workers[static_cast<std::size_t>(std::lround(q / 10.0 * (workers.size() - 1)))]);
        workers = std::move(quantiles);
    }
    const int n = static_cast<int>(workers.size());
    m_shown = workers;
    if (n != m_count || distribution != m_distribution) {
        QStringList names;
        if (distribution) {
            for (int q = 0; q <= 10; ++q)
                names << QString::number(q * 10); // percentiles: 0 is the least idle worker, 100 the most
        } else {
            // Label every worker while there is room, else every fourth or eighth (short labels: Qt Charts
            // elides a label wider than its bar to "...").
            const int step = n > 24 ? 8 : n > 12 ? 4 : 1;
            for (int w = 0; w < n; ++w)
                names << (w % step == 0 ? QString::number(w) : QString(w, QLatin1Char(' ')));
        }
        m_categories->clear();
        m_categories->append(names);
        QFont labels = m_categories->labelsFont();
        labels.setPointSizeF(n > 8 ? 7.0 : QFont().pointSizeF() * 0.85);
        m_categories->setLabelsFont(labels);
        const QString axis = distribution ? tr("%1 workers: percentile by idle time").arg(all.size()) : tr("worker");
        m_categories->setProperty("sgdscopeTitle", axis);
        m_categories->setTitleText(height() >= 130 ? axis : QString());
        m_distribution = distribution;
        for (QBarSet* set : {m_busy, m_idle, m_apply, m_transfer, m_unaccounted}) {
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
                 std::pair {m_apply, t.apply * scale}, std::pair {m_transfer, t.transfer * scale},
                 std::pair {m_unaccounted, std::max(0.0, t.unaccounted) * scale}}) {
            if (std::abs(set->at(w) - value) > 0.01)
                set->replace(w, value);
        }
    }
}

} // namespace sgdscope::ui
