#pragma once

#include "ui/SeriesStore.h"

#include <QWidget>

class QLabel;

namespace sgdscope::ui {

class LossChart;
class WorkerBarsChart;
class TimelineStrip;
class HistogramChart;
class TrendChart;
class Exportable;

/// One mode's column: its loss, per-worker time (bars and the live timeline), and its price: async's
/// staleness (histogram and mean over time), sync's wait per update (histogram and mean over time).
class ModeColumn : public QWidget
{
    Q_OBJECT
public:
    ModeColumn(int mode, const ModeSeries* series, QWidget* parent = nullptr);

    /// The loss and the timeline every time; with `everything`, also the worker bars and the price charts
    /// (totals that change slowly: the window redraws them every third tick).
    void refresh(bool everything = true);
    void setXAxis(XAxisKind kind);
    void setShowTestSet(bool test);
    QList<const Exportable*> exportables() const;
    LossChart* lossChart() const { return m_loss; }
    WorkerBarsChart* workerChart() const { return m_workers; }
    HistogramChart* histogram() const { return m_histogram; }
    TimelineStrip* timeline() const { return m_timeline; }

private:
    int m_mode;
    const ModeSeries* m_series;
    QLabel* m_heading;
    LossChart* m_loss;
    WorkerBarsChart* m_workers;
    TimelineStrip* m_timeline;
    HistogramChart* m_histogram;
    TrendChart* m_trend;
};

} // namespace sgdscope::ui
