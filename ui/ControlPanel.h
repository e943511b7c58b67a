#pragma once

#include "ui/Controller.h"
#include "ui/SeriesStore.h"

#include <QHash>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace sgdscope::ui {

/// The controls: preset, worker count, batch, micro-batches, learning rate, straggler, jitter, seed,
/// how pushes apply (lock or lock-free; lr or lr / staleness); Start, Pause/Resume, Reset; chart options. Every value
/// is shown next to its slider.
///
/// ControlPanel.cpp builds it; ControlPanelSettings.cpp reads and sets the session's settings on its controls, and
/// ControlPanelRanges.cpp decides what the controls offer for the engine, workers and data.
class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlPanel(QWidget* parent = nullptr);

    SessionSettings settings() const;
    void setSettings(const SessionSettings& settings);
    /// Data sets loaded already (the controller's), so that a CSV file's size is known to the batch slider.
    void setDataCache(std::shared_ptr<DataCache> cache) { m_cache = std::move(cache); }
    /// The columns' modes and knobs, chosen in the columns' headers (ModeColumn): kept here with the rest of
    /// the session's settings, and sent with them (settingsChanged).
    void setColumnModes(const ColumnModes& modes);
    /// The columns' modes and knobs as chosen; settings() cuts backup's B to what the workers allow.
    const ColumnModes& chosenModes() const { return m_modes; }
    /// The panel's line of run options without a control of their own (empty if none).
    QString optionsText() const;
    /// The model and data line under the preset box.
    QString summaryText() const;
    void setState(Controller::State state);
    void setNotes(const QStringList& notes);
    void setRestartNeeded(bool needed);
    XAxisKind xAxis() const;
    double smoothing() const;
    bool showTestSet() const;

    // The widgets, for tests and shortcuts.
    QSlider* workersSlider() const { return m_workers; }
    QSlider* batchSlider() const { return m_batch; }
    QSlider* accumSlider() const { return m_accum; }
    QSlider* learningRateSlider() const { return m_lr; }
    QSlider* slowFactorSlider() const { return m_slowFactor; }
    QSlider* jitterSlider() const { return m_jitter; }
    QComboBox* slowWorkerBox() const { return m_slowWorker; }
    QComboBox* presetBox() const { return m_preset; }
    QCheckBox* perWorkerBox() const { return m_perWorker; }
    QComboBox* targetBox() const { return m_target; }
    QDoubleSpinBox* targetValueBox() const { return m_targetValue; }
    QComboBox* engineBox() const { return m_engine; }
    QComboBox* clusterBox() const { return m_cluster; }
    QComboBox* topologyBox() const { return m_topology; }
    QComboBox* hostsBox() const { return m_hosts; }
    QComboBox* applyBox() const { return m_apply; }
    QComboBox* pushLearningRateBox() const { return m_pushLr; }
    QSpinBox* seedBox() const { return m_seed; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* pauseButton() const { return m_pause; }
    QPushButton* resetButton() const { return m_reset; }

signals:
    void settingsChanged(const sgdscope::ui::SessionSettings& settings);
    void startClicked();
    void pauseClicked();
    void resetClicked();
    void chartOptionsChanged();

private:
    /// The preset box's choice: another preset drops the run options of the opened data set's model and data.
    void presetPicked();
    void presetChanged();
    void updateLabels();
    void emitSettings();
    void fillSlowWorkers();
    /// The push controls apply to the pushing modes: enabled when a column shows one.
    void updatePushControls();
    /// The batch slider's values for the current data, workers and per-worker switch; selects `wanted`, or
    /// the largest allowed value below it.
    void rebuildBatchValues(int wanted);
    int batchValue() const;
    void engineChanged();
    /// The worker counts the slider offers on the current engine (every count up to 32, then steps to 1,024).
    void fillWorkerValues();
    int workerCount() const;
    /// A file picked through an entry of a combo box ("platform file...", "host file..."): its path is the
    /// entry's data; `first` is the index of the first such entry.
    void pickFile(QComboBox* box, const QString& title, const QString& filter);

    /// A slider's value as set from outside (the preset's learning rate, a command line's --lr 0.03), kept
    /// exactly until the user moves that slider: its steps would round it.
    double exactValue(const QSlider* slider, double fromSlider) const;
    void setExact(QSlider* slider, double value);

    QComboBox* m_preset;
    QCheckBox* m_perWorker;
    QLabel* m_options;
    QList<QPair<QString, QString>> m_runOptions;
    ColumnModes m_modes;
    QString m_basePreset; // the preset under a data set opened in the window ("data: NAME" in the box)
    QHash<const QSlider*, double> m_exact;
    std::shared_ptr<DataCache> m_cache;
    QComboBox* m_engine;
    QComboBox* m_cluster;
    QComboBox* m_topology;
    QComboBox* m_hosts;
    QLabel* m_engineNote;
    QList<int> m_workerValues;
    int m_lastCluster = 3; // datacenter
    int m_lastHosts = 0;
    QLabel* m_presetSummary;
    QSlider* m_workers;
    QSlider* m_batch;
    QSlider* m_accum;
    QSlider* m_lr;
    QComboBox* m_slowWorker;
    QSlider* m_slowFactor;
    QSlider* m_jitter;
    QSpinBox* m_seed;
    QComboBox* m_apply;
    QComboBox* m_pushLr;
    QComboBox* m_target;
    QDoubleSpinBox* m_targetValue;
    QComboBox* m_xAxis;
    QCheckBox* m_testSet;
    QSlider* m_smoothing;
    QPushButton* m_start;
    QPushButton* m_pause;
    QPushButton* m_reset;
    QLabel* m_workersValue;
    QLabel* m_batchValue;
    QLabel* m_accumValue;
    QLabel* m_lrValue;
    QLabel* m_slowValue;
    QLabel* m_jitterValue;
    QLabel* m_smoothingValue;
    QLabel* m_cores;
    QLabel* m_notes;
    QLabel* m_restart;
    QList<int> m_batchValues;
    std::int64_t m_trainSamples = 0; // 0: not known (a CSV file not loaded yet)
    int m_presetBatch = 0;
    bool m_updating = false;
};

} // namespace sgdscope::ui
