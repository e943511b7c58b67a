#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/ChartPanel.h"

class QLineSeries;
class QValueAxis;

namespace sgdscope::ui {

/// The mean of a per-update figure over the mode's clock (one point per two pixel columns): async's
/// staleness, with the P - 1 that P equally fast workers average; sync's wait per update, in milliseconds.
class TrendChart : public ChartPanel
{
    Q_OBJECT
public:
    TrendChart(const QString& title, const QString& exportName, const ModeSeries* series, TrendValue value,
        const QColor& color, QWidget* parent = nullptr);
    /// The mean's name in the legend (by default "mean staleness" or "mean wait per update").
    void setMeanName(const QString& name);
    /// `reference`: a horizontal line at this value (< 0: none).
    void refresh(double reference = -1.0);

private:
    const ModeSeries* m_series;
    TrendValue m_value;
    QLineSeries* m_mean;
    QLineSeries* m_reference;
    QValueAxis* m_x;
    QValueAxis* m_y;
};

} // namespace sgdscope::ui
