#pragma once

#include "ui/Controller.h"
#include "ui/SeriesStore.h"

#include <QMainWindow>

#include <array>
#include <functional>

class QLabel;

namespace sgdscope::ui {

class ControlPanel;
class ModeColumn;
class AccuracyChart;
class LossChart;
class Exportable;

/// The window: the control panel, a Sync and an Async column, the comparison of both, a status bar.
/// Talks to core only through its Controller.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Controller* controller() const { return m_controller; }
    ControlPanel* panel() const { return m_panel; }
    const ModeSeries& series(int mode) const { return m_series[static_cast<std::size_t>(mode)]; }
    ModeColumn* column(int mode) const { return m_columns[static_cast<std::size_t>(mode)]; }
    LossChart* comparison(int which) const { return which == 0 ? m_compareSamples : m_compareSeconds; }
    AccuracyChart* accuracyChart() const { return m_compareAccuracy; }
    QString lastError() const { return m_lastError; }

    /// Writes every chart as a PNG (twice the device pixel ratio) into `folder`, plus window.png of the
    /// whole window; each file atomically. Returns the problems (empty on success).
    QStringList exportCharts(const QString& folder);
    QList<const Exportable*> exportables() const;
    /// Redraws every chart from the stores, at once (exports, benchmarks).
    void refreshCharts();
    /// Redraws every chart from the stores one chart per event-loop turn, so the window answers input
    /// between them (the timer's ticks use this). A tick arriving meanwhile restarts the round at its end.
    void scheduleRefresh();
    /// Feeds a batch as if the controller had sent it (benchmarks and tests).
    void acceptMetrics(const MetricsBatch& batch) { onMetrics(batch); }
    /// Shows a finished run's folder (File > Open run...), stopping any run; returns the problem, if any.
    QString openRun(const QString& folder);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void onMetrics(const MetricsBatch& batch);
    void onCleared();
    void refreshNextStage();
    void updateStatus();
    void applyChartOptions();
    void exportWithDialog();
    void restoreSettings();
    void saveSettings() const;

    Controller* m_controller;
    std::array<ModeSeries, modeCount> m_series;
    ControlPanel* m_panel;
    std::array<ModeColumn*, modeCount> m_columns {};
    LossChart* m_compareSamples;
    LossChart* m_compareSeconds;
    AccuracyChart* m_compareAccuracy;
    std::array<QLabel*, modeCount> m_statusLabels {};
    QLabel* m_stateLabel;
    QString m_lastError;
    QString m_viewing; // the run folder shown (File > Open run), until the next run or Reset
    QList<std::function<void()>> m_pendingRefresh;
    bool m_refreshAgain = false;
    std::uint64_t m_refreshRound = 0;
};

} // namespace sgdscope::ui
