// ControlPanel's ranges: what the controls offer for the engine, the workers and the data (worker counts, batch
// sizes, slow workers, the engine's rows and files), and the values shown beside the sliders.
#include "ui/ControlPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QSlider>

#include "ui/PanelScales.h"
#include "ui/TrainingSession.h"

#include <algorithm>

namespace sgdscope::ui {

int ControlPanel::batchValue() const
{
    if (m_batchValues.isEmpty())
        return 0;
    return m_batchValues[std::clamp(m_batch->value(), 0, static_cast<int>(m_batchValues.size()) - 1)];
}

void ControlPanel::rebuildBatchValues(int wanted)
{
    // Batch sizes: powers of two up to the largest allowed, the preset's own and that largest: the whole
    // training set, or with a batch per worker each worker's share of it (the update's batch is P x B).
    const std::int64_t n = m_trainSamples > 0 ? m_trainSamples : std::max(m_presetBatch, 1);
    const bool perWorker = m_perWorker->isChecked() && m_perWorker->isEnabled();
    const std::int64_t most = perWorker && m_trainSamples > 0 ? std::max<std::int64_t>(1, n / workerCount()) : n;
    QList<int> values;
    for (std::int64_t b = 1; b < most && b <= 65536; b *= 2)
        values << static_cast<int>(b);
    if (most <= 65536)
        values << static_cast<int>(most);
    for (const int extra : {m_presetBatch, wanted}) { // the preset's, and one from the command line (--batch 96)
        if (extra > 0 && extra <= most && !values.contains(extra))
            values << extra;
    }
    std::sort(values.begin(), values.end());
    m_batchValues = values;
    // The wanted batch, else the largest allowed below it (a per-worker batch that more workers make too large).
    int index = static_cast<int>(values.size()) - 1;
    if (wanted > 0) {
        index = 0;
        for (int i = 0; i < values.size(); ++i) {
            if (values[i] <= wanted)
                index = i;
        }
    }
    const bool was = m_updating;
    m_updating = true;
    m_batch->setRange(0, static_cast<int>(values.size()) - 1);
    m_batch->setValue(index);
    m_updating = was;
}

void ControlPanel::fillSlowWorkers()
{
    const bool was = m_updating;
    m_updating = true;
    const int current = m_slowWorker->currentIndex();
    m_slowWorker->clear();
    m_slowWorker->addItem(tr("none"));
    for (int w = 0; w < workerCount(); ++w)
        m_slowWorker->addItem(tr("worker %1").arg(w));
    m_slowWorker->setCurrentIndex(std::min(current < 0 ? 0 : current, m_slowWorker->count() - 1));
    m_updating = was;
}

int ControlPanel::workerCount() const
{
    // Slider positions 1, 2, ... : the worker count itself up to 32, then the steps of m_workerValues.
    return m_workerValues.isEmpty()
        ? 1
        : m_workerValues[std::clamp(m_workers->value() - 1, 0, static_cast<int>(m_workerValues.size()) - 1)];
}

void ControlPanel::fillWorkerValues()
{
    const QString engine = m_engine->currentData().toString();
    const int most = maxWindowWorkers(engine);
    const int current = m_workerValues.isEmpty() ? 2 : workerCount();
    m_workerValues.clear();
    for (int p = 1; p <= std::min(most, 32); ++p)
        m_workerValues << p;
    // Past 32: four steps per doubling (40, 48, 56, 64, 80, ...), so that 1,024 is as easy to reach as 4.
    for (int base = 32; base < most; base *= 2) {
        for (int step = 1; step <= 4; ++step) {
            const int p = base + step * base / 4;
            if (p <= most)
                m_workerValues << p;
        }
    }
    const bool was = m_updating;
    m_updating = true;
    m_workers->setRange(1, static_cast<int>(m_workerValues.size()));
    int index = 0;
    for (int i = 0; i < m_workerValues.size(); ++i) {
        if (m_workerValues[i] <= current)
            index = i;
    }
    m_workers->setValue(index + 1);
    m_updating = was;
}

void ControlPanel::engineChanged()
{
    const QString engine = m_engine->currentData().toString();
    const bool sim = engine == QStringLiteral("sim");
    const bool mpi = engine == QStringLiteral("mpi");
    auto showRow = [](QWidget* field, bool visible) {
        field->setVisible(visible);
        if (auto* form = qobject_cast<QFormLayout*>(field->parentWidget()->layout())) {
            if (QWidget* label = form->labelForField(field))
                label->setVisible(visible);
        }
    };
    showRow(m_cluster, sim);
    showRow(m_topology, sim);
    showRow(m_hosts, mpi);
    // An MPI job's modes have different worker counts (N, or N - 1 beside a parameter server): its batch is the
    // update's.
    m_perWorker->setEnabled(!mpi);
    m_perWorker->setToolTip(mpi ? tr("Not for MPI jobs: sync and local-sgd have N workers, the modes with a "
                                     "parameter server (async, ssp, backup, dc-asgd) N - 1, so a batch per worker "
                                     "would differ between the modes.")
                                : m_perWorker->property("tip").toString());
    m_workers->setToolTip(sim ? tr("Simulated workers P, one host each (async: and a parameter server). Applies live.")
            : mpi ? tr("MPI processes: sync and local-sgd on P workers, the other modes on a parameter server and "
                       "P - 1 workers. Applies on Reset.")
                  : tr("Worker threads P; both modes use the same number. Applies live."));
    m_engineNote->setText(sim ? tr("Seconds are virtual: the cluster's time, not this machine's.")
            : mpi ? tr("One job runs the left column's mode, then the right's; Pause ends it (its files stay in its "
                       "run folder).")
                  : QString());
    m_engineNote->setVisible(sim || mpi);
    fillWorkerValues();
    fillSlowWorkers();
    updateLabels();
}

void ControlPanel::pickFile(QComboBox* box, const QString& title, const QString& filter)
{
    const int entry = box->count() - 1;
    const QString path = QFileDialog::getOpenFileName(this, title, QString(), filter);
    if (path.isEmpty()) {
        box->setCurrentIndex(box == m_cluster ? m_lastCluster : m_lastHosts);
        return;
    }
    box->setItemData(entry, path);
    box->setItemText(entry, QFileInfo(path).fileName());
    box->setItemData(entry, path, Qt::ToolTipRole);
    box->setCurrentIndex(entry);
}

void ControlPanel::updateLabels()
{
    m_workersValue->setText(QString::number(workerCount()));
    const int batchIndex = std::clamp(m_batch->value(), 0, static_cast<int>(m_batchValues.size()) - 1);
    const QString batch = m_batchValues.isEmpty() ? QStringLiteral("-") : QString::number(m_batchValues[batchIndex]);
    m_batchValue->setText(m_perWorker->isChecked() ? tr("%1/w").arg(batch) : batch);
    m_batchValue->setToolTip(m_perWorker->isChecked() && !m_batchValues.isEmpty()
            ? tr("%1 per worker: %2 samples per update").arg(batch).arg(m_batchValues[batchIndex] * workerCount())
            : QString());
    m_accumValue->setText(QString::number(m_accum->value()));
    m_lrValue->setText(QString::number(exactValue(m_lr, lrFromSlider(m_lr->value())), 'g', 3));
    m_slowValue->setText(
        QStringLiteral("%1\u00d7").arg(exactValue(m_slowFactor, m_slowFactor->value() * slowStep), 0, 'g', 3));
    m_jitterValue->setText(QString::number(exactValue(m_jitter, m_jitter->value() * jitterStep), 'g', 2));
    m_smoothingValue->setText(QString::number(m_smoothing->value() / 100.0, 'f', 2));
    const int cores = Controller::machineCores();
    const QString engine = m_engine->currentData().toString();
    const bool shared = engine == QStringLiteral("threads")
        || (engine == QStringLiteral("mpi") && m_hosts->currentData().toString().isEmpty());
    if (workerCount() > cores && shared)
        m_cores->setText(
            tr("%1 workers on %2 cores: workers share cores, so idle time and staleness include the operating "
               "system's scheduling. This is not %1 machines.")
                .arg(workerCount())
                .arg(cores));
    m_cores->setVisible(workerCount() > cores && shared);
}

} // namespace sgdscope::ui
