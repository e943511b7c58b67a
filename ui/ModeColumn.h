#pragma once

#include "ui/SeriesStore.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QSplitter;

namespace sgdscope::ui {

class LossChart;
class WorkerBarsChart;
class TimelineStrip;
class HistogramChart;
class TrendChart;
class Exportable;

/// One column: a header that picks its mode (and the mode's knob: S, B, H or lambda), then the mode's loss,
/// per-worker time (bars and the live timeline), and its price: the distribution of the wait per update for
/// sync-like modes (sync, backup, local-sgd), staleness for the modes that push worker by worker (async, ssp,
/// dc-asgd), as a histogram and a mean over time.
///
/// The header shows the mode chosen for the next run (the session's settings); the charts show the mode whose
/// figures they hold (the running one until Reset). A choice is sent as modeChosen()/knobChanged(); the window
/// decides (swapping the columns' modes, applying knobs live) and sets both back.
class ModeColumn : public QWidget
{
    Q_OBJECT
public:
    ModeColumn(int column, const ModeSeries* series, QWidget* parent = nullptr);

    /// The loss and the timeline every time; with `everything`, also the worker bars and the price charts
    /// (totals that change slowly: the window redraws them every third tick).
    void refresh(bool everything = true);
    void setXAxis(XAxisKind kind);
    void setShowTestSet(bool test);

    /// The mode whose figures the column shows ("sync", "ssp", ...): titles, colours, file stems, and the lower
    /// charts of its family (rebuilt when the family or the colour changes).
    void showMode(const QString& name);
    QString shownMode() const { return m_shown; }
    /// The header: the column's chosen mode and its knob from `modes`; `maxBackupWorkers` is B's end. `note` is
    /// said beside it (e.g. that a new mode applies on Reset; empty: nothing).
    /// `knobsLive`: the knob reaches a running session (threads, a simulated cluster); an MPI job takes it at its
    /// next start.
    void setChoice(const ColumnModes& modes, int maxBackupWorkers, const QString& note, bool knobsLive = true);

    QList<const Exportable*> exportables() const;
    LossChart* lossChart() const { return m_loss; }
    WorkerBarsChart* workerChart() const { return m_workers; }
    HistogramChart* histogram() const { return m_histogram; }
    /// The price over time (none for ssp, whose second price chart is boundWaits).
    TrendChart* trend() const { return m_trend; }
    /// ssp: how long its bound held each push (else none).
    HistogramChart* boundWaits() const { return m_boundWaits; }
    TimelineStrip* timeline() const { return m_timeline; }
    // The header's widgets (tests).
    QComboBox* modeBox() const { return m_modeBox; }
    QSpinBox* knobBox() const { return m_knob; } // S, B or H
    QDoubleSpinBox* lambdaBox() const { return m_lambda; } // dc-asgd's lambda
    QLabel* knobLabel() const { return m_knobLabel; }
    QLabel* noteLabel() const { return m_note; }

signals:
    /// The user picked a mode in the header (by core's name).
    void modeChosen(const QString& name);
    /// The user set the knob of the chosen mode.
    void knobChanged(double value);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void buildCharts();
    void updateKnob(const ColumnModes& modes, int maxBackupWorkers, bool live);

    int m_column;
    const ModeSeries* m_series;
    QString m_shown;
    QString m_chosen;
    QString m_chartsFor; // the mode the charts were built for
    XAxisKind m_xAxis = XAxisKind::Samples;
    bool m_showTest = false;
    bool m_updating = false;
    bool m_sized = false; // the splitters have had their initial sizes (first shown)
    QComboBox* m_modeBox;
    QLabel* m_knobLabel;
    QSpinBox* m_knob;
    QDoubleSpinBox* m_lambda;
    QLabel* m_description;
    QLabel* m_note;
    QSplitter* m_splitter;
    QSplitter* m_middle;
    QSplitter* m_bottom;
    LossChart* m_loss = nullptr;
    WorkerBarsChart* m_workers = nullptr;
    TimelineStrip* m_timeline = nullptr;
    HistogramChart* m_histogram = nullptr;
    TrendChart* m_trend = nullptr;
    HistogramChart* m_boundWaits = nullptr;
};

} // namespace sgdscope::ui
