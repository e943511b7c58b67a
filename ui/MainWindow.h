#pragma once

#include "ui/Controller.h"
#include "ui/SeriesStore.h"
#include "ui/WindowExports.h"
#include "ui/WindowFileActions.h"
#include "ui/WindowStudyActions.h"

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
struct LoadedRun;

/// The window: the control panel, two columns of a mode each (sync and async by default; each column's header
/// picks its mode), the comparison of both, a status bar. Talks to core only through its Controller. Its files
/// (WindowFileActions) and its PNG exports (WindowExports) are objects of their own.
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
    /// A column's figures in the status bar.
    QLabel* statusLabel(int mode) const { return m_statusLabels[static_cast<std::size_t>(mode)]; }

    /// Writes every chart as a PNG (twice the device pixel ratio) into `folder`, plus the whole window
    /// (windowExportName); each file atomically. Returns the problems (empty on success).
    QStringList exportCharts(const QString& folder) { return m_exports.exportCharts(folder); }
    /// The whole window's file there: window.png for sync | async, else named after the modes
    /// (ssp-vs-backup-window.png), as the comparison charts' stems are (ssp-vs-backup-loss-samples).
    QString windowExportName() const { return m_exports.windowExportName(); }
    QList<const Exportable*> exportables() const { return m_exports.exportables(); }
    /// Redraws every chart from the stores, at once (exports, benchmarks).
    void refreshCharts();
    /// Redraws every chart from the stores one chart per event-loop turn, so the window answers input
    /// between them (the timer's ticks use this). A tick arriving meanwhile restarts the round at its end.
    void scheduleRefresh();
    /// Feeds a batch as if the controller had sent it (benchmarks and tests).
    void acceptMetrics(const MetricsBatch& batch) { onMetrics(batch); }
    /// Shows a finished run's folder (File > Open run...), stopping any run; returns the problem, if any.
    QString openRun(const QString& folder) { return m_files.openRun(folder); }
    /// Trains on a CSV file or an IDX folder (File > Open data...): the data is loaded and the model built
    /// first, with headless's loaders and messages; on a problem nothing changes and the message is returned.
    /// A running session goes on: the data applies on Reset.
    QString openData(const QString& path) { return m_files.openData(path); }
    /// A run folder (it has summary.json) is opened as a run, anything else as data (the command line's
    /// `sgdscope PATH`, a folder dropped on the window, File > Open recent).
    QString openPath(const QString& path) { return m_files.openPath(path); }
    /// The window's command line: the settings it gives (ui/WindowOptions.h), shown in the panel. The data is
    /// loaded and the model built first: returns the problem, if any (and then changes nothing).
    /// `checked`: that check's result, made already (app/main.cpp makes it before any window exists).
    QString applySettings(const SessionSettings& settings, const MetricsBatch* checked = nullptr);
    /// Run > Copy command line: puts the headless command that repeats the current session on the clipboard
    /// and returns what the status bar says about it.
    QString copyCommandLine();
    /// Takes data sets loaded already (app/main.cpp checks the command line's before the window opens).
    void adoptDataCache(std::shared_ptr<DataCache> cache);
    /// File > Save run as...: writes the current session (or the run folder shown) as a run folder, the files
    /// a headless --out writes; returns the problem, if any.
    QString saveRun(const QString& folder) { return m_files.saveRun(folder); }
    /// Shows a study's folder (File > Open study..., `sgdscope DIR` on a study folder) in its window; returns the
    /// problem, if any.
    QString openStudy(const QString& dir) { return m_studies.openStudy(dir); }
    /// The window's studies: the study shown, Run > Sweep...
    WindowStudyActions& studies() { return m_studies; }
    /// The paths File > Open recent lists, newest first.
    static QStringList recentPaths() { return WindowFileActions::recentPaths(); }
    /// The run folder shown (File > Open run), until the next run or Reset; empty if none.
    QString viewingFolder() const { return m_viewingFolder; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override { WindowFileActions::dragEnter(event); }
    void dropEvent(QDropEvent* event) override { m_files.drop(event); }

private:
    // The file actions show what they open through showRunFolder and adoptOpenedData.
    friend class WindowFileActions;
    /// Shows a run folder read already (absolute path), stopping any run.
    void showRunFolder(const QString& folder, const LoadedRun& loaded);
    /// Data opened (File > Open data), with its settings and first look checked already.
    void adoptOpenedData(const SessionSettings& settings, const MetricsBatch& firstLook);

    void onMetrics(const MetricsBatch& batch);
    void onCleared();
    void refreshNextStage();
    void updateStatus();
    void applyChartOptions();
    void restoreSettings();
    void updateTitle();
    void updateStartNote();
    void saveSettings() const;
    /// A column's header picked a mode: the column takes it, and if the other column shows it, the other one
    /// takes this column's mode (the two always differ). Applies on Reset.
    void chooseMode(int column, const QString& name);
    /// A column's header set its mode's knob (live).
    void setKnob(int column, double value);
    /// The columns' headers from the settings, and the modes the charts show: the running session's until
    /// Reset (or the run folder's), else the chosen ones.
    void updateColumns();

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
    QString m_viewingFolder;
    QString m_previewProblem; // why Start would fail (the last first look's error), until one works
    ColumnModes m_viewingModes; // the run folder's modes, while one is shown
    WindowFileActions m_files {this};
    WindowExports m_exports {this};
    WindowStudyActions m_studies {this};
    QList<std::function<void()>> m_pendingRefresh;
    bool m_refreshAgain = false;
    std::uint64_t m_refreshRound = 0;
};

} // namespace sgdscope::ui
