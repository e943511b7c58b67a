#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/ChartPanel.h"

class QBarSet;
class QBarCategoryAxis;
class QValueAxis;
class QLineSeries;

namespace sgdscope::ui {

/// Share of pushes by staleness (updates applied between a gradient's read and its apply). Sync is always 0.
class StalenessHistogramChart : public ChartPanel
{
    Q_OBJECT
public:
    StalenessHistogramChart(
        const QString& title, const QString& exportName, const QColor& color, QWidget* parent = nullptr);
    void setCounts(const std::vector<std::int64_t>& counts);

private:
    QBarSet* m_set;
    QBarCategoryAxis* m_categories;
    QValueAxis* m_value;
    int m_bins = 0;
};

/// Mean staleness over the mode's clock, with the P - 1 that equal workers average for reference.
class StalenessTrendChart : public ChartPanel
{
    Q_OBJECT
public:
    StalenessTrendChart(
        const QString& title, const QString& exportName, const ModeSeries* series, QWidget* parent = nullptr);
    void refresh(int workers);

private:
    const ModeSeries* m_series;
    QLineSeries* m_mean;
    QLineSeries* m_reference;
    QValueAxis* m_x;
    QValueAxis* m_y;
};

} // namespace sgdscope::ui
