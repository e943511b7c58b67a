#pragma once

#include "ui/Controller.h"
#include "ui/SeriesStore.h"

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
/// async apply mode; Start, Pause/Resume, Reset; chart options. Every value is shown next to its slider.
class ControlPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlPanel(QWidget* parent = nullptr);

    SessionSettings settings() const;
    void setSettings(const SessionSettings& settings);
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
    QComboBox* targetBox() const { return m_target; }
    QDoubleSpinBox* targetValueBox() const { return m_targetValue; }
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
    void presetChanged();
    void updateLabels();
    void emitSettings();
    void fillSlowWorkers();

    QComboBox* m_preset;
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
    bool m_updating = false;
};

} // namespace sgdscope::ui
