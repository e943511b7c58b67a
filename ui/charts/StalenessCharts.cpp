#include "ui/charts/StalenessCharts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>

#include <cmath>
#include <numeric>

namespace sgdscope::ui {

namespace {
constexpr int maxBins = 16; // the last bin collects everything above
}

StalenessHistogramChart::StalenessHistogramChart(
    const QString& title, const QString& exportName, const QColor& color, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_set(new QBarSet(tr("pushes")))
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
    styleAxis(m_categories, tr("staleness (updates)"));
    styleAxis(m_value, tr("% of pushes"));
    m_value->setRange(0, 100);
    m_value->setTickCount(5);
    m_value->setLabelFormat(QStringLiteral("%d"));
    m_chart->addAxis(m_categories, Qt::AlignBottom);
    m_chart->addAxis(m_value, Qt::AlignLeft);
    series->attachAxis(m_categories);
    series->attachAxis(m_value);
    setCounts({});
}

void StalenessHistogramChart::setCounts(const std::vector<std::int64_t>& counts)
{
    // As many bins as have room for a label (about 22 pixels each), at most 16.
    const int room = std::max(4, static_cast<int>(m_chart->plotArea().width() / 22));
    const int bins = std::clamp(static_cast<int>(counts.size()), 4, std::min(maxBins, room));
    if (bins != m_bins) {
        QStringList names;
        for (int b = 0; b < bins; ++b) {
            if (b == bins - 1 && static_cast<int>(counts.size()) > bins)
                names << QStringLiteral("%1+").arg(b);
            else
                names << QString::number(b);
        }
        m_categories->clear();
        m_categories->append(names);
        if (m_set->count() > bins)
            m_set->remove(bins, m_set->count() - bins);
        while (m_set->count() < bins)
            m_set->append(0.0);
        m_bins = bins;
    }
    const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), std::int64_t(0)));
    double peak = 0;
    for (int b = 0; b < bins; ++b) {
        std::int64_t c = 0;
        if (b < bins - 1)
            c = b < static_cast<int>(counts.size()) ? counts[static_cast<std::size_t>(b)] : 0;
        else
            for (std::size_t i = static_cast<std::size_t>(b); i < counts.size(); ++i)
                c += counts[i];
        const double share = total > 0 ? 100.0 * static_cast<double>(c) / total : 0.0;
        if (std::abs(m_set->at(b) - share) > 0.01)
            m_set->replace(b, share);
        peak = std::max(peak, share);
    }
    setRoundTicks(m_value, peak > 0 ? std::min(100.0, std::ceil(peak / 10.0) * 10.0) : 100.0);
}

StalenessTrendChart::StalenessTrendChart(
    const QString& title, const QString& exportName, const ModeSeries* series, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_series(series)
    , m_mean(new QLineSeries)
    , m_reference(new QLineSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
{
    m_mean->setName(tr("mean staleness"));
    m_mean->setPen(QPen(palette::async(), 2));
    m_reference->setName(tr("P \u2212 1"));
    m_reference->setPen(QPen(QColor(0x80, 0x80, 0x80), 1, Qt::DashLine));
    m_chart->addSeries(m_mean);
    m_chart->addSeries(m_reference);
    styleAxis(m_x, tr("seconds of the mode's clock"));
    styleAxis(m_y, tr("staleness"));
    m_x->setLabelFormat(QStringLiteral("%.3g"));
    m_y->setLabelFormat(QStringLiteral("%.2g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QLineSeries* s : {m_mean, m_reference}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_x->setRange(0, 1);
    m_y->setRange(0, 1);
}

void StalenessTrendChart::refresh(int workers)
{
    const auto& points = m_series->points();
    const double xMax = points.empty() ? 1.0 : std::max(points.back().seconds, 1e-6);
    const QList<QPointF> trend = stalenessTrend(points, 0, xMax, plotColumns() / 2);
    double yMax = std::max(1.0, static_cast<double>(workers - 1) * 1.2);
    for (const QPointF& p : trend)
        yMax = std::max(yMax, p.y() * 1.1);
    m_mean->replace(trend);
    m_reference->replace(QList<QPointF> {QPointF(0, workers - 1), QPointF(xMax, workers - 1)});
    setRoundTicks(m_x, xMax);
    setRoundTicks(m_y, std::ceil(yMax));
}

} // namespace sgdscope::ui
