#include "ui/charts/ChartPanel.h"

#include <QAbstractAxis>
#include <QContextMenuEvent>
#include <QGraphicsLayout>
#include <QLegend>
#include <QPainter>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

ChartPanel::ChartPanel(const QString& title, const QString& exportName, QWidget* parent)
    : QChartView(new QChart, parent) // the view owns it (the default constructor's own chart would leak on setChart)
    , m_chart(chart())
    , m_exportName(exportName)
{
    m_chart->setTitle(title);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(font().pointSizeF() * 0.95);
    m_chart->setTitleFont(titleFont);
    m_chart->setMargins(QMargins(4, 2, 4, 2));
    m_chart->layout()->setContentsMargins(0, 0, 0, 0);
    m_chart->setBackgroundRoundness(0);
    m_chart->legend()->setAlignment(Qt::AlignTop);
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.85);
    m_chart->legend()->setFont(small);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    setRenderHint(QPainter::Antialiasing, false);
    setMinimumSize(150, 100);
}

void ChartPanel::styleAxis(QAbstractAxis* axis, const QString& title)
{
    QFont f = axis->labelsFont();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    axis->setLabelsFont(f);
    axis->setTitleText(title);
    QFont t = f;
    t.setPointSizeF(f.pointSizeF() * 0.95);
    axis->setTitleFont(t);
    QPen grid = axis->gridLinePen();
    grid.setColor(QColor(0xe3, 0xe3, 0xe3));
    axis->setGridLinePen(grid);
}

void ChartPanel::setRoundTicks(QValueAxis* axis, double max)
{
    max = max > 0 ? max : 1.0;
    const double raw = max / 4.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (const double m : {1.0, 2.0, 5.0, 10.0}) {
        step = m * magnitude;
        if (step >= raw)
            break;
    }
    // The axis ends on a tick, so it changes in steps as the data grows: re-laying out an axis (its labels)
    // is the expensive part of a chart's refresh.
    const double end = std::ceil(max / step - 1e-9) * step;
    if (axis->tickType() == QValueAxis::TicksDynamic && axis->max() == end && axis->tickInterval() == step
        && axis->min() == 0)
        return;
    // Qt Charts makes one graphics item per tick: never let a transient range/interval pair ask for millions.
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(std::max({end, axis->max(), step}));
    axis->setRange(0, end);
    axis->setTickInterval(step);
}

void ChartPanel::setTitle(const QString& title)
{
    m_chart->setTitle(title);
}

QString ChartPanel::title() const
{
    return m_chart->title();
}

int ChartPanel::plotColumns() const
{
    return std::max(50, static_cast<int>(m_chart->plotArea().width()));
}

QImage ChartPanel::renderImage(qreal scale) const
{
    QImage image(size() * scale, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        return image; // out of memory: savePng says so
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    const_cast<ChartPanel*>(this)->render(&painter, QRectF(QPointF(0, 0), QSizeF(size())), rect());
    return image;
}

void ChartPanel::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    const bool compact = height() < 190 || width() < 240;
    if (m_chart->legend()->property("sgdscopeWanted").isValid() == false)
        m_chart->legend()->setProperty("sgdscopeWanted", m_chart->legend()->isVisible());
    m_chart->legend()->setVisible(!compact && m_chart->legend()->property("sgdscopeWanted").toBool());
    for (QAbstractAxis* axis : m_chart->axes()) {
        if (!axis->property("sgdscopeTitle").isValid())
            axis->setProperty("sgdscopeTitle", axis->titleText());
        const QString title = axis->property("sgdscopeTitle").toString();
        // The x axis keeps its title unless really short of room; the y axis's rotated title goes first.
        const bool keep = axis->orientation() == Qt::Horizontal ? height() >= 130 : !compact;
        axis->setTitleText(keep ? title : QString());
    }
}

void ChartPanel::contextMenuEvent(QContextMenuEvent* event)
{
    showExportMenu(this, *this, event->globalPos());
}

} // namespace sgdscope::ui
