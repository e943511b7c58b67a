#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/ChartPanel.h"

#include <QColor>
#include <QList>

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace sgdscope::ui {

/// Both modes' accuracy at every whole-set evaluation against their own clocks: on the held-out test set where
/// the data set has one (fashion-mnist), else on the whole training set (the legend says which), with the
/// target accuracy as a dashed line when one is set. Regression runs have no accuracy; the chart says so.
class AccuracyChart : public ChartPanel
{
    Q_OBJECT
public:
    struct Curve
    {
        const ModeSeries* series;
        QColor color;
        QString name;
    };

    AccuracyChart(QList<Curve> curves, QWidget* parent = nullptr);

    /// The target accuracy to draw (< 0: none).
    void setTarget(double accuracy);
    void refresh();
    /// Points drawn for curve i after the last refresh (tests).
    int pointCount(int curve) const;

private:
    struct CurveSeries
    {
        Curve curve;
        QLineSeries* line = nullptr;
        QScatterSeries* dots = nullptr;
    };
    QList<CurveSeries> m_curves;
    QLineSeries* m_target;
    QValueAxis* m_x;
    QValueAxis* m_y;
    double m_targetAccuracy = -1.0;
};

} // namespace sgdscope::ui
