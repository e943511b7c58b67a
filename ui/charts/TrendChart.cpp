#include "ui/charts/TrendChart.h"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>

#include <cmath>

namespace sgdscope::ui {

void TrendChart::setMeanName(const QString& name)
{
    m_mean->setName(name);
}

TrendChart::TrendChart(const QString& title, const QString& exportName, const ModeSeries* series, TrendValue value,
    const QColor& color, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_series(series)
    , m_value(value)
    , m_mean(new QLineSeries)
    , m_reference(new QLineSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
{
    const bool staleness = value == TrendValue::Staleness;
    m_mean->setName(staleness ? tr("mean staleness") : tr("mean wait per update"));
    m_mean->setPen(QPen(color, 2));
    m_reference->setName(tr("P \u2212 1"));
    m_reference->setPen(QPen(QColor(0x80, 0x80, 0x80), 1, Qt::DashLine));
    m_chart->addSeries(m_mean);
    m_chart->addSeries(m_reference);
    if (!staleness) {
        for (QLegendMarker* m : m_chart->legend()->markers(m_reference))
            m->setVisible(false);
    }
    styleAxis(m_x, tr("seconds of the mode's clock"));
    styleAxis(m_y, staleness ? tr("staleness (updates)") : tr("wait (ms)"));
    m_x->setLabelFormat(QStringLiteral("%.3g"));
    m_y->setLabelFormat(QStringLiteral("%.3g"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (QLineSeries* s : {m_mean, m_reference}) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
    }
    m_x->setRange(0, 1);
    m_y->setRange(0, 1);
}

void TrendChart::refresh(double reference)
{
    const auto& points = m_series->points();
    const double xMax = points.empty() ? 1.0 : std::max(points.back().seconds, 1e-6);
    QList<QPointF> trend = meanTrend(points, m_value, 0, xMax, plotColumns() / 2);
    const double scale = m_value == TrendValue::WaitSeconds ? 1000.0 : 1.0; // seconds -> ms
    double yMax = reference > 0 ? reference * 1.2 : 0.0;
    for (QPointF& p : trend) {
        p.setY(p.y() * scale);
        yMax = std::max(yMax, p.y() * 1.1);
    }
    m_mean->replace(trend);
    if (reference >= 0)
        m_reference->replace(QList<QPointF> {QPointF(0, reference), QPointF(xMax, reference)});
    else if (m_reference->count() > 0)
        m_reference->clear();
    setRoundTicks(m_x, xMax);
    setRoundTicks(m_y, yMax > 0 ? yMax : 1.0);
    const QString xTitle
        = m_series->status().virtualClock ? tr("virtual seconds (simulated)") : tr("seconds of the mode's clock");
    if (m_x->property("sgdscopeTitle").toString() != xTitle) {
        m_x->setProperty("sgdscopeTitle", xTitle);
        m_x->setTitleText(height() >= 130 ? xTitle : QString());
    }
}

} // namespace sgdscope::ui
