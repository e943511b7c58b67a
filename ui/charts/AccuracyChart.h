#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/ChartPanel.h"

#include <QColor>
#include <QList>

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace sgdscope::ui {

/// The modes' accuracy at whole-set evaluations against their own clocks: on the held-out test set where the
/// data set has one (fashion-mnist, blobs), else on the whole training set (the title and legend say which),
/// with the modes' target accuracy (the one in effect, from their status) as a dashed line. Regression runs
/// have no accuracy; the chart says so. The line is thinned to the plot's width, the dots to maxDots.
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

    /// Curve i's colour and name (the mode a column shows); the title names the curves ("Sync vs SSP: ...").
    void setCurve(int curve, const QColor& color, const QString& name);
    void refresh();
    /// The line drawn for curve i after the last refresh (tests).
    QList<QPointF> linePoints(int curve) const;
    /// The target line's height after the last refresh (NaN if none; tests).
    double targetDrawn() const;
    QString xAxisTitle() const;

private:
    struct CurveSeries
    {
        Curve curve;
        QLineSeries* line = nullptr;
        QScatterSeries* dots = nullptr;
    };
    /// "Sync vs SSP": the curves' names.
    QString subject() const;

    QList<CurveSeries> m_curves;
    QLineSeries* m_target;
    QValueAxis* m_x;
    QValueAxis* m_y;
};

} // namespace sgdscope::ui
