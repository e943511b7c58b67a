#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/ChartPanel.h"

#include <QColor>
#include <QList>

class QLineSeries;
class QScatterSeries;
class QValueAxis;
class QLogValueAxis;

namespace sgdscope::ui {

/// Loss against updates, samples seen or seconds (log y): per curve the raw batch loss drawn faint (in a
/// chart of one curve), its
/// exponential smoothing on top (kept by the store, ModeSeries::setSmoothing), the whole-training-set (or
/// test-set) loss as dots, configuration changes as dashed vertical lines and divergence as a red square where
/// the curve ends (its last finite point). Each series is redrawn with one
/// replace() per refresh, decimated to the plot's pixel width.
class LossChart : public ChartPanel
{
    Q_OBJECT
public:
    struct Curve
    {
        const ModeSeries* series;
        QColor color;
        QString name;
    };

    LossChart(const QString& title, const QString& exportName, QList<Curve> curves, XAxisKind xAxis,
        QWidget* parent = nullptr);

    /// Curve i's colour and name (the mode a column shows), its series' legend entries with it.
    void setCurve(int curve, const QColor& color, const QString& name);
    /// Curve i's legend name as drawn (its smoothed line's; tests).
    QString curveName(int curve) const;
    void setXAxis(XAxisKind kind);
    XAxisKind xAxis() const { return m_xAxis; }
    /// What the updates axis counts, its title ("pushes", "rounds (H local steps and an averaging)"); by default
    /// "updates (sync) / pushes (async)".
    void setUpdatesTitle(const QString& title);
    /// The x axis's title as drawn (tests; the axis hides it on a short chart).
    QString xAxisTitle() const;
    /// Whether the dots show the loss on the held-out test set (where the data set has one) instead of the
    /// whole training set.
    void setShowTestSet(bool test);
    /// Recomputes every series from the stores.
    void refresh();
    /// Points in the raw series of curve i after the last refresh (tests).
    int rawPointCount(int curve) const;
    int markerLineCount() const;
    /// Ticks on the log y axis after the last refresh (tests).
    int yTickCount() const;
    /// Where curve i's divergence marker is (NaN if none), after the last refresh (tests).
    double divergedMarkerX(int curve) const;

private:
    struct CurveSeries
    {
        Curve curve;
        QLineSeries* raw = nullptr;
        QLineSeries* smooth = nullptr;
        QScatterSeries* evals = nullptr;
        QScatterSeries* diverged = nullptr;
    };
    void updateAxisTitle();

    QList<CurveSeries> m_curves;
    QList<QLineSeries*> m_markerLines;
    QValueAxis* m_x;
    QLogValueAxis* m_y;
    XAxisKind m_xAxis;
    QString m_updatesTitle;
    bool m_showRaw; // a single mode's chart shows its raw batch loss; the comparison only the smoothed curves
    bool m_showTest = false;
};

QString axisTitle(XAxisKind kind, bool virtualClock);

} // namespace sgdscope::ui
