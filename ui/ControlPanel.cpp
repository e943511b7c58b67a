#include "ui/ControlPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/ModeChoice.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

namespace {
constexpr int lrStepsPerDecade = 20;
constexpr double jitterStep = 0.05;
constexpr double slowStep = 0.5;

// The sliders' ranges come from the option table (Controller::windowRange).
double lrMin()
{
    return Controller::windowRange("lr").first; // slider 0
}
int lrSteps()
{
    const auto [low, high] = Controller::windowRange("lr");
    return static_cast<int>(std::lround(std::log10(high / low) * lrStepsPerDecade));
}
double lrFromSlider(int v)
{
    return lrMin() * std::pow(10.0, static_cast<double>(v) / lrStepsPerDecade);
}
int sliderFromLr(double lr)
{
    return static_cast<int>(std::lround(std::log10(lr / lrMin()) * lrStepsPerDecade));
}
int slowSteps(double factor)
{
    return static_cast<int>(std::lround(factor / slowStep));
}
int jitterSteps(double sigma)
{
    return static_cast<int>(std::lround(sigma / jitterStep));
}

QSlider* slider(int lo, int hi, const QString& tip)
{
    auto* s = new QSlider(Qt::Horizontal);
    s->setRange(lo, hi);
    s->setToolTip(tip);
    s->setMinimumWidth(110);
    return s;
}

QLabel* valueLabel()
{
    auto* l = new QLabel;
    l->setMinimumWidth(52);
    l->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    QFont f = l->font();
    f.setBold(true);
    l->setFont(f);
    return l;
}

QWidget* withValue(QWidget* control, QLabel* value)
{
    auto* w = new QWidget;
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(control, 1);
    h->addWidget(value);
    return w;
}
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

ControlPanel::ControlPanel(QWidget* parent)
    : QWidget(parent)
{
    m_preset = new QComboBox;
    m_preset->addItems(Controller::presetNames());
    m_preset->setCurrentIndex(std::max(0, static_cast<int>(m_preset->findText(SessionSettings().preset)))); // parabola
    m_preset->setToolTip(tr("The model and data to train; a change applies on Reset."));
    m_presetSummary = new QLabel;
    m_presetSummary->setWordWrap(true);
    m_presetSummary->setStyleSheet(QStringLiteral("color:#555"));
    m_options = new QLabel;
    m_options->setWordWrap(true);
    m_options->setStyleSheet(QStringLiteral("color:#555"));
    m_options->setToolTip(tr("Run options from the command line (or File > Open data) that have no control of "
                             "their own: they stay across Reset, and are part of Run > Copy command line."));
    m_options->hide();
    m_perWorker = new QCheckBox(tr("per worker (global batch = workers \u00d7 batch)"));
    m_perWorker->setToolTip(
        tr("Weak scaling, as DDP users think of it: each worker takes this many samples, so the update's batch "
           "grows with the workers and every worker stays busy; the mathematics then changes with P. Off: the "
           "batch is the update's, split over the workers. Applies live."));
    m_perWorker->setProperty("tip", m_perWorker->toolTip());

    m_engine = new QComboBox;
    m_engine->addItem(tr("this machine (threads)"), QStringLiteral("threads"));
    m_engine->addItem(tr("simulated cluster"), QStringLiteral("sim"));
    m_engine->addItem(tr("MPI processes"), QStringLiteral("mpi"));
    m_engine->setToolTip(
        tr("Where the workers run: OpenMP threads in this process; a simulated cluster in virtual time (SimGrid; "
           "up to 1,024 workers, the math computed for real); or MPI processes started by mpirun (this machine "
           "or a host file). A change applies on Reset."));
    m_cluster = new QComboBox;
    m_cluster->addItem(tr("ideal (no network cost)"), QStringLiteral("ideal"));
    m_cluster->addItem(tr("local (this machine's speed)"), QStringLiteral("local"));
    m_cluster->addItem(tr("local-mpi (this machine's MPI processes)"), QStringLiteral("local-mpi"));
    m_cluster->addItem(tr("datacenter (10 Gb/s, 20 \u00b5s)"), QStringLiteral("datacenter"));
    m_cluster->addItem(tr("wan (1 Gb/s, 30 ms)"), QStringLiteral("wan"));
    m_cluster->addItem(tr("platform file..."), QString());
    m_cluster->setCurrentIndex(m_cluster->findData(QStringLiteral("datacenter")));
    m_cluster->setToolTip(tr("The simulated cluster: a built-in one (README has their figures) or a SimGrid "
                             "platform file (XML). Applies on Reset."));
    m_hosts = new QComboBox;
    m_hosts->addItem(tr("this machine"), QString());
    m_hosts->addItem(tr("host file..."), QString());
    m_hosts->setToolTip(tr("Where mpirun starts the processes: this machine, or the machines of an Open MPI host "
                           "file (README: running across machines). Applies on Reset."));
    m_engineNote = new QLabel;
    m_engineNote->setWordWrap(true);
    m_engineNote->setStyleSheet(QStringLiteral("color:#555"));

    m_workers = slider(1, Controller::windowMaximum("workers"), QString());
    m_batch = slider(0, 0,
        tr("Samples per batch, split over the workers: one team-wide update of sync and backup, one local step of "
           "local-sgd's team; the pushing modes (async, ssp, dc-asgd) push each worker's slice on its own. Applies "
           "live."));
    m_accum = slider(1, Controller::windowMaximum("accum"),
        tr("Micro-batches K each worker computes in a row and sums before combining or applying: the "
           "same result as the whole slice at once. Applies live."));
    m_lr = slider(0, lrSteps(), tr("Learning rate (log scale). Applies live."));
    m_slowWorker = new QComboBox;
    m_slowWorker->setToolTip(
        tr("A worker made slower: after computing it sleeps, as a slow remote machine would be slow "
           "without using our cores. Applies live."));
    m_slowFactor = slider(slowSteps(Controller::windowRange("slow").first),
        slowSteps(Controller::windowRange("slow").second), tr("How many times slower the straggler is. Applies live."));
    m_jitter = slider(0, jitterSteps(Controller::windowRange("jitter").second),
        tr("Random compute-time jitter: every compute time is multiplied by exp(\u03c3 z), z standard "
           "normal, seeded. Applies live."));
    m_seed = new QSpinBox;
    m_seed->setRange(0, static_cast<int>(Controller::windowRange("seed").second));
    m_seed->setToolTip(tr("Seed for the initial weights, data order and jitter; applies on Reset."));
    m_apply = new QComboBox;
    m_apply->addItems({tr("lock (parameter server)"), tr("lock-free (Hogwild!)")});
    m_apply->setToolTip(
        tr("How the pushing modes' workers apply their gradients: in a short critical section, or element by "
           "element without a lock (async and ssp on this machine's threads; dc-asgd keeps the lock: it "
           "compensates under it). Applies live."));
    m_pushLr = new QComboBox;
    m_pushLr->addItem(tr("constant (lr)"));
    m_pushLr->addItem(tr("lr / max(1, staleness)"));
    m_pushLr->setToolTip(
        tr("The learning rate a push of the pushing modes (async, ssp, dc-asgd) is applied with: the panel's, or "
           "divided by the push's staleness (Zhang et al. 2016; --async-lr staleness). Sync, backup and local-sgd "
           "have no staleness. Applies live."));

    m_target = new QComboBox;
    m_target->addItems({tr("none"), tr("test accuracy \u2265"), tr("training loss \u2264")});
    m_target->setToolTip(
        tr("Time to target: each mode's clock and samples when its whole-set evaluation first reaches it "
           "(test accuracy needs a data set with a test set). Applies live."));
    m_targetValue = new QDoubleSpinBox;
    m_targetValue->setDecimals(4);
    m_targetValue->setRange(0.0, Controller::windowRange("target-loss").second); // accuracy: at most 1
    m_targetValue->setSingleStep(0.01);
    m_targetValue->setValue(0.88);
    m_targetValue->setEnabled(false);

    m_xAxis = new QComboBox;
    m_xAxis->addItems({tr("updates"), tr("samples seen"), tr("seconds")});
    m_xAxis->setCurrentIndex(1);
    m_xAxis->setToolTip(tr("What the loss charts' x axis counts."));
    m_smoothing = slider(0, 99, tr("Smoothing of the bold loss curve (exponential, as TensorBoard's)."));
    m_smoothing->setValue(90);
    m_testSet = new QCheckBox(tr("dots: test set"));
    m_testSet->setToolTip(tr("The loss charts' dots show the held-out test set's loss instead of the whole "
                             "training set's (for data sets with a test set)."));

    m_workersValue = valueLabel();
    m_batchValue = valueLabel();
    m_accumValue = valueLabel();
    m_lrValue = valueLabel();
    m_slowValue = valueLabel();
    m_jitterValue = valueLabel();
    m_smoothingValue = valueLabel();

    m_start = new QPushButton(tr("Start"));
    m_start->setToolTip(tr("Start training both columns' modes (Space)."));
    m_pause = new QPushButton(tr("Pause"));
    m_pause->setToolTip(tr("Pause or resume (Space)."));
    m_reset = new QPushButton(tr("Reset"));
    m_reset->setToolTip(tr("Stop and clear; the next Start begins afresh with the current settings (Ctrl+R)."));
    for (QPushButton* b : {m_start, m_pause, m_reset})
        b->setFocusPolicy(Qt::NoFocus); // Space belongs to Start/Pause, not to the focused button

    m_cores = new QLabel;
    m_cores->setWordWrap(true);
    m_cores->setStyleSheet(QStringLiteral("color:#a05a00"));
    m_notes = new QLabel;
    m_notes->setWordWrap(true);
    m_notes->setStyleSheet(QStringLiteral("color:#555"));
    m_restart = new QLabel(tr("This change applies on Reset (Ctrl+R): preset, seed, engine and a column's mode need "
                              "a new run, and so does every setting of an MPI job."));
    m_restart->setWordWrap(true);
    m_restart->setStyleSheet(QStringLiteral("color:#b00020; font-weight:bold"));
    m_restart->hide();

    auto* model = new QGroupBox(tr("Model and data"));
    auto* modelForm = new QFormLayout(model);
    modelForm->addRow(tr("Preset"), m_preset);
    modelForm->addRow(m_presetSummary);
    modelForm->addRow(m_options);
    modelForm->addRow(tr("Seed"), m_seed);

    auto* parallel = new QGroupBox(tr("Parallelism"));
    auto* form = new QFormLayout(parallel);
    form->addRow(tr("Engine"), m_engine);
    form->addRow(tr("Cluster"), m_cluster);
    form->addRow(tr("Hosts"), m_hosts);
    form->addRow(m_engineNote);
    form->addRow(tr("Workers"), withValue(m_workers, m_workersValue));
    form->addRow(tr("Batch"), withValue(m_batch, m_batchValue));
    form->addRow(QString(), m_perWorker);
    form->addRow(tr("Micro-batches"), withValue(m_accum, m_accumValue));
    form->addRow(tr("Learning rate"), withValue(m_lr, m_lrValue));
    // "Push": they govern every pushing mode (async, ssp, dc-asgd), not async alone.
    form->addRow(tr("Push apply"), m_apply);
    form->addRow(tr("Push lr"), m_pushLr);
    auto* target = new QWidget;
    auto* targetRow = new QHBoxLayout(target);
    targetRow->setContentsMargins(0, 0, 0, 0);
    targetRow->addWidget(m_target, 1);
    targetRow->addWidget(m_targetValue);
    form->addRow(tr("Target"), target);
    form->addRow(m_cores);

    auto* stragglers = new QGroupBox(tr("Stragglers"));
    auto* sform = new QFormLayout(stragglers);
    sform->addRow(tr("Slow worker"), m_slowWorker);
    sform->addRow(tr("Slower by"), withValue(m_slowFactor, m_slowValue));
    sform->addRow(tr("Jitter \u03c3"), withValue(m_jitter, m_jitterValue));

    auto* charts = new QGroupBox(tr("Charts"));
    auto* cform = new QFormLayout(charts);
    cform->addRow(tr("Loss against"), m_xAxis);
    cform->addRow(tr("Smoothing"), withValue(m_smoothing, m_smoothingValue));
    cform->addRow(m_testSet);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_start);
    buttons->addWidget(m_pause);
    buttons->addWidget(m_reset);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(buttons);
    layout->addWidget(m_restart);
    layout->addWidget(model);
    layout->addWidget(parallel);
    layout->addWidget(stragglers);
    layout->addWidget(charts);
    layout->addWidget(m_notes);
    layout->addStretch(1);

    connect(m_preset, &QComboBox::currentIndexChanged, this, [this] {
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
    });
    connect(m_perWorker, &QCheckBox::toggled, this, [this] {
        rebuildBatchValues(batchValue());
        updateLabels();
        emitSettings();
    });
    for (QSlider* s : {m_workers, m_batch, m_accum, m_lr, m_slowFactor, m_jitter})
        connect(s, &QSlider::valueChanged, this, [this] {
            if (!m_updating)
                m_exact.remove(qobject_cast<QSlider*>(sender())); // the user's value now: the slider's step
            if (sender() == m_workers) {
                fillSlowWorkers();
                if (m_perWorker->isChecked())
                    rebuildBatchValues(batchValue()); // each worker's share of the data is smaller now
            }
            updateLabels();
            emitSettings();
        });
    connect(m_slowWorker, &QComboBox::currentIndexChanged, this, [this] { emitSettings(); });
    connect(m_engine, &QComboBox::currentIndexChanged, this, [this] {
        engineChanged();
        emitSettings();
    });
    connect(m_cluster, &QComboBox::activated, this, [this](int index) {
        if (index == m_cluster->count() - 1)
            pickFile(m_cluster, tr("SimGrid platform file"), tr("SimGrid platforms (*.xml);;All files (*)"));
        m_lastCluster = m_cluster->currentIndex();
        emitSettings();
    });
    connect(m_hosts, &QComboBox::activated, this, [this](int index) {
        if (index == 1)
            pickFile(m_hosts, tr("Open MPI host file"), tr("All files (*)"));
        m_lastHosts = m_hosts->currentIndex();
        emitSettings();
    });
    connect(m_apply, &QComboBox::currentIndexChanged, this, [this] { emitSettings(); });
    connect(m_pushLr, &QComboBox::currentIndexChanged, this, [this] { emitSettings(); });
    connect(m_target, &QComboBox::currentIndexChanged, this, [this] {
        m_targetValue->setEnabled(m_target->currentIndex() > 0);
        if (!m_updating && m_target->currentIndex() == 2 && m_targetValue->value() == 0.88)
            m_targetValue->setValue(0.05);
        emitSettings();
    });
    connect(m_targetValue, &QDoubleSpinBox::valueChanged, this, [this] { emitSettings(); });
    connect(m_testSet, &QCheckBox::toggled, this, &ControlPanel::chartOptionsChanged);
    connect(m_seed, &QSpinBox::valueChanged, this, [this] { emitSettings(); });
    connect(m_xAxis, &QComboBox::currentIndexChanged, this, &ControlPanel::chartOptionsChanged);
    connect(m_smoothing, &QSlider::valueChanged, this, [this] {
        updateLabels();
        emit chartOptionsChanged();
    });
    connect(m_start, &QPushButton::clicked, this, &ControlPanel::startClicked);
    connect(m_pause, &QPushButton::clicked, this, &ControlPanel::pauseClicked);
    connect(m_reset, &QPushButton::clicked, this, &ControlPanel::resetClicked);

    m_updating = true;
    m_basePreset = m_preset->currentText();
    engineChanged();
    m_workers->setValue(2);
    m_accum->setValue(1);
    m_slowFactor->setValue(4);
    presetChanged();
    fillSlowWorkers();
    m_updating = false;
    updateLabels();
    setState(Controller::State::Idle);
}

double ControlPanel::exactValue(const QSlider* slider, double fromSlider) const
{
    return m_exact.value(slider, fromSlider);
}

void ControlPanel::setExact(QSlider* slider, double value)
{
    m_exact.insert(slider, value);
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
    const int batchIndex = std::clamp(m_batch->value(), 0, static_cast<int>(m_batchValues.size()) - 1);
    s.batch = m_batchValues.isEmpty() ? 0 : m_batchValues[batchIndex];
    s.accum = m_accum->value();
    s.learningRate = exactValue(m_lr, lrFromSlider(m_lr->value()));
    s.slowWorker = m_slowWorker->currentIndex() - 1;
    s.slowFactor = exactValue(m_slowFactor, m_slowFactor->value() * slowStep);
    s.jitter = exactValue(m_jitter, m_jitter->value() * jitterStep);
    s.seed = static_cast<std::uint64_t>(m_seed->value());
    s.lockFree = m_apply->currentIndex() == 1;
    s.stalenessLearningRate = m_pushLr->currentIndex() == 1;
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
    m_pushLr->setCurrentIndex(s.stalenessLearningRate ? 1 : 0);
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

void ControlPanel::setState(Controller::State state)
{
    const bool running = state == Controller::State::Running || state == Controller::State::Loading;
    m_start->setEnabled(!running);
    m_start->setText(state == Controller::State::Paused ? tr("Resume") : tr("Start"));
    m_pause->setEnabled(state == Controller::State::Running);
    m_reset->setEnabled(state != Controller::State::Idle);
}

void ControlPanel::setNotes(const QStringList& notes)
{
    m_notes->setText(notes.join(QLatin1Char('\n')));
}

void ControlPanel::setRestartNeeded(bool needed)
{
    m_restart->setVisible(needed);
}

XAxisKind ControlPanel::xAxis() const
{
    return static_cast<XAxisKind>(m_xAxis->currentIndex());
}

double ControlPanel::smoothing() const
{
    return m_smoothing->value() / 100.0;
}

bool ControlPanel::showTestSet() const
{
    return m_testSet->isChecked();
}

} // namespace sgdscope::ui
