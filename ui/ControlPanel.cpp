#include "ui/ControlPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/PanelScales.h"

#include <algorithm>

namespace sgdscope::ui {

namespace {
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
    m_topology = new QComboBox;
    m_topology->addItem(tr("parameter server (every mode's)"), QStringLiteral("ps"));
    m_topology->addItem(tr("binomial tree"), QStringLiteral("tree"));
    m_topology->addItem(tr("all-reduce"), QStringLiteral("allreduce"));
    m_topology->setToolTip(
        tr("The wires of the team-wide modes (sync, backup, local-sgd) between the simulated hosts: a parameter "
           "server, the wires every mode can use (the pushing modes always push to one; the default, so that the "
           "columns compare modes on the same wires); a binomial tree; or an all-reduce (reduce-scatter, then "
           "all-gather: each worker sends 2 (P - 1) / P of the parameters). Every topology sums the same fixed tree: "
           "the bits do not change, only the time. Backup needs the parameter server. Applies on Reset."));
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
    m_pushLr->addItem(tr("lr \u00d7 b / B (sync's step per sample)"), QStringLiteral("scaled"));
    m_pushLr->addItem(tr("constant lr (P\u00d7 sync's step)"), QStringLiteral("constant"));
    m_pushLr->addItem(tr("lr \u00d7 b / B / max(1, staleness)"), QStringLiteral("staleness"));
    m_pushLr->setToolTip(
        tr("The learning rate a push of the pushing modes (async, ssp, dc-asgd) is applied with. The panel's lr is "
           "for a batch of B samples, and a push is the mean gradient of its own b = B / P: scaled by b / B, every "
           "mode takes the same step per sample (the default, --async-lr scaled); constant applies the whole lr to "
           "every push, P times sync's step per sample; staleness divides the scaled rate by the push's staleness "
           "too (Zhang et al. 2016). Sync, backup and local-sgd apply lr per batch. Applies live."));

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
    form->addRow(tr("Wires"), m_topology);
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

    connect(m_preset, &QComboBox::currentIndexChanged, this, &ControlPanel::presetPicked);
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
    connect(m_topology, &QComboBox::activated, this, [this] { emitSettings(); });
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
