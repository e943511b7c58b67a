#include "ui/MainWindow.h"

#include "ui/ControlPanel.h"
#include "ui/ModeChoice.h"
#include "ui/ModeColumn.h"
#include "ui/PointConversion.h"
#include "ui/RunFolder.h"
#include "ui/StoredSettings.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include "ui/charts/AccuracyChart.h"
#include "ui/charts/LossChart.h"

#include <QAction>
#include <QClipboard>
#include <QCloseEvent>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>

namespace sgdscope::ui {

namespace {
QString compact(double v)
{
    if (v >= 1e6)
        return QStringLiteral("%1M").arg(v / 1e6, 0, 'f', 2);
    if (v >= 1e3)
        return QStringLiteral("%1k").arg(v / 1e3, 0, 'f', 1);
    return QString::number(v, 'f', 0);
}

/// "3.4 µs", "12 ms", "1.5 s".
QString duration(double seconds)
{
    if (seconds < 1e-3)
        return QStringLiteral("%1 \u00b5s").arg(seconds * 1e6, 0, 'g', 3);
    if (seconds < 1.0)
        return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'g', 3);
    return QStringLiteral("%1 s").arg(seconds, 0, 'g', 3);
}
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_controller(new Controller(this))
{
    setWindowTitle(tr("sgdscope \u2014 sync and async data-parallel SGD"));
    m_panel = new ControlPanel;
    auto* panelScroll = new QScrollArea;
    panelScroll->setWidget(m_panel);
    panelScroll->setWidgetResizable(true);
    panelScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    panelScroll->setMinimumWidth(250);
    panelScroll->setMaximumWidth(std::max(270, m_panel->sizeHint().width() + 40));

    for (int m = 0; m < modeCount; ++m) {
        auto* column = new ModeColumn(m, &m_series[static_cast<std::size_t>(m)]);
        m_columns[static_cast<std::size_t>(m)] = column;
        connect(column, &ModeColumn::modeChosen, this, [this, m](const QString& name) { chooseMode(m, name); });
        connect(column, &ModeColumn::knobChanged, this, [this, m](double value) { setKnob(m, value); });
    }
    // Named after the columns' modes (updateColumns).
    const QList<LossChart::Curve> curves {
        {&m_series[LeftColumn], QColor(), QString()}, {&m_series[RightColumn], QColor(), QString()}};
    m_compareSamples = new LossChart(QString(), QStringLiteral("comparison-samples"), curves, XAxisKind::Samples);
    m_compareSamples->setToolTip(
        tr("Both modes' smoothed batch loss against the samples they have seen: which one learns more per sample."));
    m_compareSeconds = new LossChart(QString(), QStringLiteral("comparison-seconds"), curves, XAxisKind::Seconds);
    m_compareSeconds->setToolTip(
        tr("Both modes' smoothed batch loss against their own clocks (each advances only while that mode "
           "trains): which one gets to a low loss sooner."));
    m_compareAccuracy = new AccuracyChart(
        {{&m_series[LeftColumn], QColor(), QString()}, {&m_series[RightColumn], QColor(), QString()}});

    auto* columns = new QSplitter(Qt::Horizontal);
    columns->addWidget(m_columns[LeftColumn]);
    columns->addWidget(m_columns[RightColumn]);
    columns->setChildrenCollapsible(false);
    auto* comparison = new QSplitter(Qt::Horizontal);
    comparison->addWidget(m_compareSamples);
    comparison->addWidget(m_compareSeconds);
    comparison->addWidget(m_compareAccuracy);
    comparison->setChildrenCollapsible(false);
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(columns);
    right->addWidget(comparison);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    right->setSizes({3000, 1000});
    columns->setSizes({1000, 1000});
    comparison->setSizes({1000, 1000, 1000});
    comparison->setMinimumHeight(150);
    right->setChildrenCollapsible(false);
    auto* main = new QSplitter(Qt::Horizontal);
    main->addWidget(panelScroll);
    main->addWidget(right);
    main->setStretchFactor(1, 1);
    main->setChildrenCollapsible(false);
    setCentralWidget(main);

    // Menus and shortcuts.
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_files.addActions(file); // Open run, Open data, Open recent, Save run as
    QAction* exportAction = file->addAction(tr("&Export charts..."), this, [this] { m_exports.exportWithDialog(); });
    exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* startPause = run->addAction(tr("&Start / Pause"), m_controller, &Controller::togglePause);
    startPause->setShortcut(QKeySequence(Qt::Key_Space));
    QAction* reset = run->addAction(tr("&Reset"), m_controller, &Controller::reset);
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->addSeparator();
    QAction* copy = run->addAction(
        tr("&Copy command line"), this, [this] { statusBar()->showMessage(copyCommandLine(), 10000); });
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    copy->setToolTip(tr("The headless command that repeats this session from its start, on the clipboard."));
    m_studies.addActions(file, run); // File > Open study..., Run > Sweep...
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About sgdscope"), this, [this] {
        QMessageBox::about(this, tr("About sgdscope"),
            tr("<p><b>sgdscope</b> trains one network two ways side by side: synchronous data-parallel SGD "
               "(exactly large-batch gradient descent, bitwise the same for any worker count), asynchronous SGD "
               "(Downpour / Hogwild!) or a mode between them (SSP, backup workers, local SGD, DC-ASGD), and shows "
               "what each costs: loss, idle time, staleness.</p>"
               "<p>Workers are OpenMP threads on this machine (%1 cores), hosts of a simulated cluster in "
               "virtual time (SimGrid), or MPI processes (Open MPI).</p>")
                .arg(Controller::machineCores()));
    });

    // Status bar: per mode updates/s, samples/s, loss, idle fraction, mean staleness.
    m_stateLabel = new QLabel;
    statusBar()->addWidget(m_stateLabel);
    for (int m = 0; m < modeCount; ++m) {
        auto* label = new QLabel; // (its tooltip names its mode: updateColumns)
        m_statusLabels[static_cast<std::size_t>(m)] = label;
        statusBar()->addPermanentWidget(label);
    }

    connect(m_controller, &Controller::metricsReady, this, &MainWindow::onMetrics);
    connect(m_controller, &Controller::cleared, this, &MainWindow::onCleared);
    connect(m_controller, &Controller::stateChanged, this, [this](Controller::State s) {
        m_panel->setState(s);
        updateColumns(); // a run shows its own modes until Reset
        updateStatus();
        updateStartNote();
    });
    connect(m_controller, &Controller::previewFailed, this, [this](const QString& message) {
        m_previewProblem = message;
        updateStartNote();
    });
    connect(m_controller, &Controller::restartNeeded, m_panel, &ControlPanel::setRestartNeeded);
    connect(m_controller, &Controller::errorOccurred, this, [this](const QString& message) {
        m_lastError = message;
        auto* box = new QMessageBox(QMessageBox::Warning, tr("sgdscope"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
    connect(m_panel, &ControlPanel::settingsChanged, m_controller, &Controller::setSettings);
    connect(m_panel, &ControlPanel::settingsChanged, this, [this] {
        updateColumns();
        updateTitle();
        updateStartNote();
    });
    connect(m_panel, &ControlPanel::startClicked, m_controller, &Controller::start);
    connect(m_panel, &ControlPanel::pauseClicked, m_controller, &Controller::togglePause);
    connect(m_panel, &ControlPanel::resetClicked, m_controller, &Controller::reset);
    connect(m_panel, &ControlPanel::chartOptionsChanged, this, &MainWindow::applyChartOptions);

    m_panel->setDataCache(m_controller->dataCache());
    setAcceptDrops(true);
    restoreSettings();
    m_controller->setSettings(m_panel->settings());
    updateColumns();
    applyChartOptions();
    updateStatus();
    updateTitle();
    updateStartNote();
}

QString MainWindow::applySettings(const SessionSettings& settings, const MetricsBatch* checked)
{
    // The data is loaded and the model built now, as a headless run would before it trains: what cannot work
    // is said before the window opens (and a CSV file's size is known to the batch slider).
    const MetricsBatch first = checked ? *checked : previewSession(m_controller->dataCache(), settings, true);
    if (!first.error.isEmpty())
        return first.error;
    m_panel->setSettings(settings);
    m_controller->setSettings(m_panel->settings());
    m_controller->adoptFirstLook(first); // the check was the first look
    updateColumns();
    updateTitle();
    updateStartNote();
    return {};
}

void MainWindow::chooseMode(int column, const QString& name)
{
    ColumnModes modes = m_panel->settings().modes;
    const auto here = static_cast<std::size_t>(column);
    const auto other = static_cast<std::size_t>(1 - column);
    if (modes.names[here] == name)
        return;
    if (modes.names[other] == name)
        modes.names[other] = modes.names[here]; // the two columns swap their modes
    modes.names[here] = name;
    m_panel->setColumnModes(modes); // (settingsChanged: the controller, then updateColumns)
}

void MainWindow::setKnob(int column, double value)
{
    ColumnModes modes = m_panel->settings().modes;
    const auto mode = modeNamed(modes.names[static_cast<std::size_t>(column)]);
    if (!mode || knobValue(modes, *mode) == value)
        return;
    setKnobValue(modes, *mode, value);
    m_panel->setColumnModes(modes);
}

void MainWindow::updateColumns()
{
    const SessionSettings s = m_panel->settings();
    const bool viewing = !m_viewingFolder.isEmpty();
    const Controller::State state = m_controller->state();
    const bool running = state != Controller::State::Idle;
    // A stopped or failed session trains nothing until Reset.
    const bool training = running && state != Controller::State::Finished && state != Controller::State::Failed;
    const ColumnModes& shown = viewing ? m_viewingModes : running ? m_controller->startedSettings().modes : s.modes;
    QStringList titles;
    for (int m = 0; m < modeCount; ++m) {
        const auto c = static_cast<std::size_t>(m);
        ModeColumn* column = m_columns[c];
        const bool other = s.modes.names[c] != shown.names[c];
        const auto showing = modeNamed(shown.names[c]);
        const QString showingTitle = showing ? modeTitle(*showing) : shown.names[c];
        QString note = !other ? QString()
            : viewing         ? tr("for the next run (the folder's %1 shown)").arg(showingTitle)
            : training        ? tr("applies on Reset (%1 runs until then)").arg(showingTitle)
                              : tr("applies on Reset (%1 shown until then)").arg(showingTitle);
        // Backup's B cut to what the workers allow (fewer workers; an MPI job's backup has P - 1): said, not silent.
        const int chosenB = m_panel->chosenModes().backupWorkers;
        if (note.isEmpty() && s.modes.names[c] == QStringLiteral("backup") && chosenB > s.modes.backupWorkers)
            note = s.engine == QStringLiteral("mpi")
                ? tr("B = %1 is cut to %2: an MPI job of %3 processes runs backup on a parameter server and %4 workers")
                      .arg(chosenB)
                      .arg(s.modes.backupWorkers)
                      .arg(s.workers)
                      .arg(s.modes.backupWorkers + 1)
                : tr("B = %1 is cut to %2: %3 workers").arg(chosenB).arg(s.modes.backupWorkers).arg(s.workers);
        column->setChoice(s.modes, maxBackupWorkers(s), note, s.engine != QStringLiteral("mpi"));
        if (column->shownMode() != shown.names[c]) {
            column->showMode(shown.names[c]);
            column->setXAxis(m_panel->xAxis());
            column->setShowTestSet(m_panel->showTestSet());
        }
        const auto mode = modeNamed(shown.names[c]);
        const QString title = mode ? modeTitle(*mode) : shown.names[c];
        const QColor color = mode ? palette::mode(*mode) : QColor(Qt::gray);
        m_compareSamples->setCurve(m, color, title);
        m_compareSeconds->setCurve(m, color, title);
        m_compareAccuracy->setCurve(m, color, title);
        titles << title;
        m_statusLabels[c]->setToolTip(mode && isSyncLike(*mode)
                ? tr("%1: updates per second, samples per second, latest loss, share of worker time spent idle, "
                     "mean wait per update.")
                      .arg(title)
                : tr("%1: pushes per second, samples per second, latest loss, share of worker time spent idle, "
                     "mean staleness.")
                      .arg(title));
    }
    // File stems named after the modes shown: exports of sync | async and of ssp | backup share a folder.
    const QString stem = shown.names[LeftColumn] + QStringLiteral("-vs-") + shown.names[RightColumn];
    m_compareSamples->setExportName(stem + QStringLiteral("-loss-samples"));
    m_compareSeconds->setExportName(stem + QStringLiteral("-loss-seconds"));
    m_compareAccuracy->setExportName(stem + QStringLiteral("-accuracy"));
    const QString versus = tr("%1 vs %2").arg(titles[LeftColumn], titles[RightColumn]);
    m_compareSamples->setTitle(tr("%1: loss against samples seen").arg(versus));
    m_compareSeconds->setTitle(tr("%1: loss against seconds").arg(versus));
    m_compareAccuracy->refresh();
    updateStatus();
}

void MainWindow::adoptOpenedData(const SessionSettings& settings, const MetricsBatch& firstLook)
{
    if (!m_viewing.isEmpty())
        onCleared(); // a run folder was shown: the new session's first look replaces it
    m_panel->setSettings(settings);
    m_controller->setSettings(m_panel->settings());
    m_controller->adoptFirstLook(firstLook); // (if idle: a running session keeps its charts)
    updateTitle();
}

void MainWindow::adoptDataCache(std::shared_ptr<DataCache> cache)
{
    m_controller->adoptDataCache(cache);
    m_panel->setDataCache(std::move(cache));
}

QString MainWindow::copyCommandLine()
{
    int changes = 0;
    std::int64_t updates = 0;
    const QString command = m_controller->reproducingCommand(&changes, &updates);
    if (command.isEmpty())
        return tr("Nothing to copy yet: the command line repeats a session, so Start one first.");
    QGuiApplication::clipboard()->setText(command);
    QString said = updates > 0 ? tr("Copied the headless command for this session's first %1 sync updates").arg(updates)
                               : tr("Copied the headless command for this session");
    if (changes > 0)
        said += changes == 1
            ? tr("; it has the settings the run started with: the 1 live change since is not in it")
            : tr("; it has the settings the run started with: the %1 live changes since are not in it").arg(changes);
    return said + QLatin1Char('.');
}

void MainWindow::updateTitle()
{
    if (!m_viewingFolder.isEmpty()) {
        setWindowTitle(tr("sgdscope \u2014 %1 (run folder)").arg(QFileInfo(m_viewingFolder).fileName()));
        return;
    }
    const SessionSettings s = m_panel->settings();
    QString where = tr("threads");
    if (s.engine == QStringLiteral("sim"))
        where = tr("simulated %1").arg(s.platformFile.isEmpty() ? s.cluster : QFileInfo(s.platformFile).fileName());
    else if (s.engine == QStringLiteral("mpi"))
        where = s.hostFile.isEmpty() ? tr("MPI") : tr("MPI on %1").arg(QFileInfo(s.hostFile).fileName());
    const QString workers = s.workers == 1 ? tr("1 worker") : tr("%1 workers").arg(s.workers);
    setWindowTitle(tr("sgdscope \u2014 %1 \u00b7 %2 \u00b7 %3").arg(sessionDataName(s), workers, where));
}

void MainWindow::updateStartNote()
{
    if (m_controller->state() != Controller::State::Idle || !m_viewing.isEmpty())
        return;
    const SessionSettings s = m_panel->settings();
    const bool one = s.workers == 1;
    const QString workers = s.engine == QStringLiteral("sim")
        ? (one ? tr("1 simulated worker") : tr("%1 simulated workers").arg(s.workers))
        : s.engine == QStringLiteral("mpi")
        ? (one ? tr("an MPI job of 1 process") : tr("an MPI job of %1 processes").arg(s.workers))
        : (one ? tr("1 worker thread") : tr("%1 worker threads").arg(s.workers));
    QStringList titles;
    for (const QString& name : s.modes.names) {
        const auto mode = modeNamed(name);
        titles << (mode ? modeTitle(*mode) : name);
    }
    QStringList notes;
    // An MPI job of 1 process has no parameter server: only the modes that need none train.
    const QList<int> runnable
        = s.engine == QStringLiteral("mpi") ? mpiRunnableColumns(s) : QList<int> {LeftColumn, RightColumn};
    if (runnable.size() == modeCount)
        notes << tr("Start trains %1 and %2 side by side on %3, from the initial weights whose whole-set loss the "
                    "charts show at 0.")
                     .arg(titles[LeftColumn], titles[RightColumn], workers);
    else if (runnable.size() == 1)
        notes << tr("Start trains %1 on %2 (%3 needs a parameter server and a worker: 2 processes or more), from "
                    "the initial weights whose whole-set loss the charts show at 0.")
                     .arg(titles[runnable.front()], workers, titles[1 - runnable.front()]);
    if (!m_previewProblem.isEmpty())
        notes.prepend(tr("Start would fail: %1").arg(m_previewProblem));
    m_panel->setNotes(notes);
}

MainWindow::~MainWindow() = default;

void MainWindow::onMetrics(const MetricsBatch& batch)
{
    if (!m_previewProblem.isEmpty()
        && (batch.ready || !batch.evals[LeftColumn].empty() || !batch.evals[RightColumn].empty())) {
        m_previewProblem.clear(); // a first look (or a run) that worked
        updateStartNote();
    }
    for (int m = 0; m < modeCount; ++m)
        m_series[static_cast<std::size_t>(m)].add(batch, m);
    if (!batch.notes.isEmpty())
        m_panel->setNotes(batch.notes);
    if (isVisible())
        scheduleRefresh();
    updateStatus();
}

void MainWindow::scheduleRefresh()
{
    if (!m_pendingRefresh.isEmpty()) {
        m_refreshAgain = true;
        return;
    }
    const bool everything = m_refreshRound++ % 3 == 0;
    for (ModeColumn* c : m_columns)
        m_pendingRefresh.append([c, everything] { c->refresh(everything); });
    m_pendingRefresh.append([this] { m_compareSamples->refresh(); });
    m_pendingRefresh.append([this] { m_compareSeconds->refresh(); });
    m_pendingRefresh.append([this] { m_compareAccuracy->refresh(); });
    QTimer::singleShot(0, this, &MainWindow::refreshNextStage);
}

void MainWindow::refreshNextStage()
{
    if (m_pendingRefresh.isEmpty())
        return;
    QElapsedTimer t;
    t.start();
    m_pendingRefresh.takeFirst()();
    if (qEnvironmentVariableIsSet("SGDSCOPE_PROFILE_GUI") && t.elapsed() > 5)
        qWarning("refresh stage took %lld ms (%lld left)", static_cast<long long>(t.elapsed()),
            static_cast<long long>(m_pendingRefresh.size()));
    if (!m_pendingRefresh.isEmpty()) {
        QTimer::singleShot(0, this, &MainWindow::refreshNextStage);
    } else if (m_refreshAgain) {
        m_refreshAgain = false;
        scheduleRefresh();
    }
}

void MainWindow::showRunFolder(const QString& folder, const LoadedRun& loaded)
{
    m_controller->reset();
    onCleared();
    m_controller->setPreviewEnabled(false); // the folder's charts, not a first look
    m_viewing = loaded.title;
    m_viewingFolder = folder;
    m_viewingModes = loaded.modes;
    // The columns show the folder's modes, and the next run trains them (its knobs stay the session's).
    ColumnModes modes = m_panel->settings().modes;
    modes.names = loaded.modes.names;
    m_panel->setColumnModes(modes);
    updateColumns();
    onMetrics(loaded.batch);
    refreshCharts();
    updateStatus();
    updateTitle();
}

void MainWindow::onCleared()
{
    const bool wasViewing = !m_viewingFolder.isEmpty();
    m_viewing.clear();
    m_viewingFolder.clear();
    if (wasViewing) {
        updateTitle();
        m_controller->setPreviewEnabled(true);
    }
    for (auto& s : m_series)
        s.clear();
    updateColumns(); // the modes chosen (a run's own modes were shown until now)
    m_pendingRefresh.clear();
    m_refreshAgain = false;
    refreshCharts();
    updateStatus();
}

void MainWindow::refreshCharts()
{
    for (ModeColumn* c : m_columns)
        c->refresh();
    m_compareSamples->refresh();
    m_compareSeconds->refresh();
    m_compareAccuracy->refresh();
}

void MainWindow::applyChartOptions()
{
    for (ModeSeries& s : m_series)
        s.setSmoothing(m_panel->smoothing());
    for (ModeColumn* c : m_columns) {
        c->setXAxis(m_panel->xAxis());
        c->setShowTestSet(m_panel->showTestSet());
    }
    refreshCharts();
}

void MainWindow::updateStatus()
{
    static const char* names[] = {"Idle", "Loading data...", "Running", "Paused", "Stopped", "Failed"};
    QString state = tr(names[static_cast<int>(m_controller->state())]);
    const auto& firstLook = m_series[LeftColumn].evals();
    if (m_controller->state() == Controller::State::Idle && !firstLook.empty()) {
        // The first look: the initial weights, before Start.
        const EvalPoint& e = firstLook.front();
        state += tr(" \u00b7 initial weights: whole-set loss %1").arg(e.loss, 0, 'g', 4);
        if (e.accuracy >= 0)
            state += tr(", accuracy %1").arg(e.accuracy, 0, 'f', 3);
        if (e.hasTest && e.testAccuracy >= 0)
            state += tr(", test accuracy %1").arg(e.testAccuracy, 0, 'f', 3);
    }
    m_stateLabel->setText(m_viewing.isEmpty() ? state : tr("Viewing %1").arg(m_viewing));
    for (int m = 0; m < modeCount; ++m) {
        const ModeStatus& s = m_series[static_cast<std::size_t>(m)].status();
        QLabel* label = m_statusLabels[static_cast<std::size_t>(m)];
        const QString shown = m_columns[static_cast<std::size_t>(m)]->shownMode();
        const auto mode = modeNamed(shown);
        const QString name = mode ? modeTitle(*mode) : shown;
        const bool syncLike = mode && isSyncLike(*mode);
        if (!s.valid) {
            label->setText(name + QStringLiteral(": \u2014"));
            continue;
        }
        QString text = tr("%1: %2 %3/s \u00b7 %4 samples/s \u00b7 loss %5 \u00b7 idle %6%")
                           .arg(name, compact(s.updatesPerSecond), syncLike ? tr("upd") : tr("push"),
                               compact(s.samplesPerSecond))
                           .arg(s.lastLoss, 0, 'g', 4)
                           .arg(s.idleFraction * 100, 0, 'f', 0);
        if (s.segmentStart > 0)
            text += tr(" since the change"); // idle follows the current workers; the rest is the whole run
        if (s.lastTestAccuracy >= 0)
            text += tr(" \u00b7 test acc %1").arg(s.lastTestAccuracy, 0, 'f', 4);
        QString tip;
        if (syncLike) {
            text += tr(" \u00b7 wait %1/update").arg(duration(s.meanWait));
            // Waiting on a tiny model is the price of meeting, not of a slow worker: say which.
            if (const WaitReading reading = waitReading(s); reading.overhead) {
                text += tr(" (sync overhead)");
                tip = tr("The wait is sync overhead, not a straggler's: no worker is busier than %1x the median per "
                         "update, and the median worker computes %2 per update, under a quarter of the wait.")
                          .arg(WaitReading::stragglerRatio)
                          .arg(duration(reading.computePerUpdate));
            }
        } else {
            text += tr(" \u00b7 staleness %1").arg(s.meanStaleness, 0, 'f', 2);
        }
        if (!syncLike && s.meanLearningRate > 0) // as pushes applied it: lr x b / B (/ staleness), or lr
            text += tr(" \u00b7 mean push lr %1").arg(s.meanLearningRate, 0, 'g', 3);
        if (s.targetAccuracy >= 0 || s.targetLoss >= 0)
            text += s.targetReached ? tr(" \u00b7 target at %1 s, %2 samples")
                                          .arg(s.targetSeconds, 0, 'f', 2)
                                          .arg(compact(static_cast<double>(s.targetSamples)))
                                    : tr(" \u00b7 target not yet");
        if (s.virtualClock)
            text += tr(" (virtual time)");
        if (s.diverged)
            text += tr(" \u00b7 DIVERGED at update %1").arg(s.divergedAt);
        label->setText(text);
        label->setToolTip(tip);
        label->setStyleSheet(s.diverged ? QStringLiteral("color:#b00020") : QString());
    }
}

void MainWindow::restoreSettings()
{
    if (!restoreGeometry(QSettings().value(QStringLiteral("geometry")).toByteArray()))
        resize(1366, 860);
    m_panel->setSettings(storedSessionSettings(m_panel->settings()));
}

void MainWindow::saveSettings() const
{
    QSettings().setValue(QStringLiteral("geometry"), saveGeometry());
    storeSessionSettings(m_panel->settings());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveSettings();
    m_controller->reset(); // the training thread stops; it is joined when the controller goes
    event->accept();
}

} // namespace sgdscope::ui
