// ControlPanel's settings in and out: the session's settings read from the controls and set on them, the preset
// and the run options without a control of their own, and the exact values the sliders' steps would round.
#include "ui/ControlPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>

#include "ui/ModeChoice.h"
#include "ui/PanelScales.h"
#include "ui/WindowOptions.h"

#include <algorithm>

namespace sgdscope::ui {

namespace {
/// Run options that belong to a preset's model and data: choosing another preset drops them.
bool belongsToThePreset(const QString& name)
{
    static const QStringList names {QStringLiteral("data"), QStringLiteral("dataset"), QStringLiteral("samples"),
        QStringLiteral("targets"), QStringLiteral("csv-header"), QStringLiteral("layers"), QStringLiteral("activation"),
        QStringLiteral("loss"), QStringLiteral("weight-init"), QStringLiteral("init"), QStringLiteral("momentum")};
    return names.contains(name);
}

const QString dataItem = QStringLiteral("data"); // the preset box's entry for a data set opened in the window
} // namespace

SessionSettings ControlPanel::settings() const
{
    SessionSettings s;
    s.preset = m_basePreset;
    s.options = m_runOptions;
    s.batchPerWorker = m_perWorker->isChecked() && m_perWorker->isEnabled();
    s.workers = workerCount();
    s.engine = m_engine->currentData().toString();
    const QString cluster = m_cluster->currentData().toString();
    const bool platform = m_cluster->currentIndex() == m_cluster->count() - 1;
    s.cluster = platform ? QStringLiteral("datacenter") : cluster;
    s.platformFile = platform ? cluster : QString();
    s.hostFile = m_hosts->currentIndex() == 1 ? m_hosts->currentData().toString() : QString();
    s.topology = m_topology->currentData().toString();
    const int batchIndex = std::clamp(m_batch->value(), 0, static_cast<int>(m_batchValues.size()) - 1);
    s.batch = m_batchValues.isEmpty() ? 0 : m_batchValues[batchIndex];
    s.accum = m_accum->value();
    s.learningRate = exactValue(m_lr, lrFromSlider(m_lr->value()));
    s.slowWorker = m_slowWorker->currentIndex() - 1;
    s.slowFactor = exactValue(m_slowFactor, m_slowFactor->value() * slowStep);
    s.jitter = exactValue(m_jitter, m_jitter->value() * jitterStep);
    s.seed = static_cast<std::uint64_t>(m_seed->value());
    s.lockFree = m_apply->currentIndex() == 1;
    s.pushLearningRate = m_pushLr->currentData().toString();
    s.targetAccuracy = m_target->currentIndex() == 1 ? m_targetValue->value() : -1.0;
    s.targetLoss = m_target->currentIndex() == 2 ? m_targetValue->value() : -1.0;
    s.modes = m_modes;
    // Backup keeps at least one gradient per update, whatever the workers now (its box has the same end).
    s.modes.backupWorkers = std::clamp(m_modes.backupWorkers, 0, maxBackupWorkers(s));
    return s;
}

void ControlPanel::setColumnModes(const ColumnModes& modes)
{
    m_modes = modes;
    updatePushControls();
    emitSettings();
}

void ControlPanel::updatePushControls()
{
    // Kept when disabled: a pushing mode picked again finds its setting.
    auto shown = [this](auto&& test) { return std::any_of(m_modes.names.begin(), m_modes.names.end(), test); };
    m_pushLr->setEnabled(shown([](const QString& name) { return modeNamed(name) && !syncLikeMode(name); }));
    m_apply->setEnabled(
        shown([](const QString& name) { return name == QStringLiteral("async") || name == QStringLiteral("ssp"); }));
}

void ControlPanel::setSettings(const SessionSettings& s)
{
    m_updating = true;
    m_runOptions = s.options;
    m_modes = s.modes;
    m_basePreset = Controller::presetNames().contains(s.preset) ? s.preset : QStringLiteral("parabola");
    const QString dataName = sessionDataName(s);
    int dataIndex = m_preset->findData(dataItem);
    if (dataName != s.preset) {
        // A data set of the user's: its own entry in the preset box, "data: NAME".
        if (dataIndex < 0) {
            m_preset->addItem(dataName, dataItem);
            dataIndex = m_preset->count() - 1;
        }
        m_preset->setItemText(dataIndex, dataName);
        m_preset->setItemData(
            dataIndex, QStringLiteral("%1 (on preset %2)").arg(dataName, m_basePreset), Qt::ToolTipRole);
        m_preset->setCurrentIndex(dataIndex);
    } else {
        if (dataIndex >= 0)
            m_preset->removeItem(dataIndex);
        const int presetIndex = m_preset->findText(m_basePreset);
        if (presetIndex >= 0)
            m_preset->setCurrentIndex(presetIndex);
    }
    presetChanged();
    m_perWorker->setChecked(s.batchPerWorker);
    m_engine->setCurrentIndex(std::max(0, static_cast<int>(m_engine->findData(s.engine))));
    if (!s.platformFile.isEmpty()) {
        const int entry = m_cluster->count() - 1;
        m_cluster->setItemData(entry, s.platformFile);
        m_cluster->setItemText(entry, QFileInfo(s.platformFile).fileName());
        m_cluster->setCurrentIndex(entry);
    } else {
        m_cluster->setCurrentIndex(std::max(0, static_cast<int>(m_cluster->findData(s.cluster))));
    }
    m_lastCluster = m_cluster->currentIndex();
    m_topology->setCurrentIndex(std::max(0, static_cast<int>(m_topology->findData(s.topology))));
    if (!s.hostFile.isEmpty()) {
        m_hosts->setItemData(1, s.hostFile);
        m_hosts->setItemText(1, QFileInfo(s.hostFile).fileName());
        m_hosts->setCurrentIndex(1);
    }
    m_lastHosts = m_hosts->currentIndex();
    engineChanged();
    {
        int index = 0;
        for (int i = 0; i < m_workerValues.size(); ++i) {
            if (m_workerValues[i] <= s.workers)
                index = i;
        }
        m_workers->setValue(index + 1);
    }
    fillSlowWorkers();
    // A batch of the command line's (--batch 96) gets a position of its own on the slider.
    rebuildBatchValues(s.batch > 0 ? s.batch : m_presetBatch);
    m_accum->setValue(std::clamp(s.accum, 1, m_accum->maximum()));
    if (s.learningRate > 0) {
        m_lr->setValue(sliderFromLr(s.learningRate));
        setExact(m_lr, s.learningRate);
    }
    m_slowWorker->setCurrentIndex(std::clamp(s.slowWorker + 1, 0, m_slowWorker->count() - 1));
    m_slowFactor->setValue(std::clamp(slowSteps(s.slowFactor), m_slowFactor->minimum(), m_slowFactor->maximum()));
    setExact(m_slowFactor, s.slowFactor);
    m_jitter->setValue(std::clamp(jitterSteps(s.jitter), 0, m_jitter->maximum()));
    setExact(m_jitter, s.jitter);
    m_seed->setValue(static_cast<int>(std::min<std::uint64_t>(s.seed, static_cast<std::uint64_t>(m_seed->maximum()))));
    m_apply->setCurrentIndex(s.lockFree ? 1 : 0);
    m_pushLr->setCurrentIndex(std::max(0, m_pushLr->findData(s.pushLearningRate)));
    updatePushControls();
    m_target->setCurrentIndex(s.targetAccuracy >= 0 ? 1 : s.targetLoss >= 0 ? 2 : 0);
    if (s.targetAccuracy >= 0 || s.targetLoss >= 0)
        m_targetValue->setValue(s.targetAccuracy >= 0 ? s.targetAccuracy : s.targetLoss);
    m_targetValue->setEnabled(m_target->currentIndex() > 0);
    m_updating = false;
    updateLabels();
}

void ControlPanel::emitSettings()
{
    if (!m_updating)
        emit settingsChanged(settings());
}

void ControlPanel::presetPicked()
{
    if (!m_updating && m_preset->currentData().toString() != dataItem) {
        // Another preset: its own model and data replace the opened data set's.
        m_runOptions.removeIf([](const QPair<QString, QString>& o) { return belongsToThePreset(o.first); });
        const int dataIndex = m_preset->findData(dataItem);
        if (dataIndex >= 0) {
            const bool was = m_updating;
            m_updating = true;
            m_preset->removeItem(dataIndex);
            m_updating = was;
        }
        m_basePreset = m_preset->currentText();
    }
    presetChanged();
    emitSettings();
}

void ControlPanel::presetChanged()
{
    const Controller::PresetInfo info = Controller::presetInfo(m_basePreset, m_runOptions, m_cache.get());
    m_presetSummary->setText(info.summary);
    const QString options = optionsText();
    m_options->setText(tr("Also set: %1").arg(options));
    m_options->setVisible(!options.isEmpty());
    m_trainSamples = info.trainSamples;
    m_presetBatch = info.batch;
    const bool was = m_updating;
    m_updating = true;
    rebuildBatchValues(info.batch);
    m_lr->setValue(sliderFromLr(info.learningRate > 0 ? info.learningRate : 0.01));
    setExact(m_lr, info.learningRate > 0 ? info.learningRate : 0.01);
    m_updating = was;
    updateLabels();
}

QString ControlPanel::optionsText() const
{
    QStringList parts;
    for (const auto& [name, value] : m_runOptions) {
        const bool path = name == QStringLiteral("data") || name == QStringLiteral("init");
        parts << QStringLiteral("--%1 %2").arg(name, path ? QFileInfo(value).fileName() : value);
    }
    return parts.join(QStringLiteral(" \u00b7 "));
}

QString ControlPanel::summaryText() const
{
    return m_presetSummary->text();
}

double ControlPanel::exactValue(const QSlider* slider, double fromSlider) const
{
    return m_exact.value(slider, fromSlider);
}

void ControlPanel::setExact(QSlider* slider, double value)
{
    m_exact.insert(slider, value);
}

} // namespace sgdscope::ui
