#include "ui/charts/HistogramChart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QFontMetricsF>
#include <QLegend>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sgdscope::ui {

HistogramChart::HistogramChart(const QString& title, const QString& exportName, const QColor& color,
    const QString& xTitle, const QString& what, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_set(new QBarSet(what))
    , m_categories(new QBarCategoryAxis)
    , m_value(new QValueAxis)
{
    m_set->setColor(color);
    m_set->setBorderColor(Qt::transparent);
    auto* series = new QBarSeries;
    series->append(m_set);
    series->setBarWidth(0.85);
    m_chart->addSeries(series);
    m_chart->legend()->hide();
    styleAxis(m_categories, xTitle);
    styleAxis(m_value, tr("%1 of %2").arg(QStringLiteral("%"), what));
    m_value->setRange(0, 100);
    m_value->setTickCount(5);
    m_value->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(m_categories, Qt::AlignBottom);
    m_chart->addAxis(m_value, Qt::AlignLeft);
    series->attachAxis(m_categories);
    series->attachAxis(m_value);
    setBins({QStringLiteral("0")}, {0});
}

void HistogramChart::setBins(const QStringList& labels, const std::vector<std::int64_t>& counts)
{
    const int bins = static_cast<int>(labels.size());
    if (labels != m_labels) {
        m_categories->clear();
        m_categories->append(labels);
        if (m_set->count() > bins)
            m_set->remove(bins, m_set->count() - bins);
        while (m_set->count() < bins)
            m_set->append(0.0);
        m_labels = labels;
    }
    const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), std::int64_t(0)));
    double peak = 0;
    for (int b = 0; b < bins; ++b) {
        const std::int64_t c = b < static_cast<int>(counts.size()) ? counts[static_cast<std::size_t>(b)] : 0;
        const double share = total > 0 ? 100.0 * static_cast<double>(c) / total : 0.0;
        if (std::abs(m_set->at(b) - share) > 0.01)
            m_set->replace(b, share);
        peak = std::max(peak, share);
    }
    setRoundTicks(m_value, peak > 0 ? std::min(100.0, std::ceil(peak / 10.0) * 10.0) : 100.0);
}

bool HistogramChart::labelsFit(const QStringList& labels) const
{
    if (labels.isEmpty())
        return true;
    const QFontMetricsF metrics(m_categories->labelsFont());
    qreal widest = 0;
    for (const QString& label : labels)
        widest = std::max(widest, metrics.horizontalAdvance(label));
    constexpr qreal padding = 6; // a margin between neighbouring labels (chosen by eye, not Qt's own rule)
    return widest + padding <= m_chart->plotArea().width() / static_cast<qreal>(labels.size());
}

QStringList HistogramChart::labels() const
{
    return m_labels;
}

std::vector<double> HistogramChart::shares() const
{
    std::vector<double> out;
    for (int b = 0; b < m_set->count(); ++b)
        out.push_back(m_set->at(b));
    return out;
}

} // namespace sgdscope::ui
