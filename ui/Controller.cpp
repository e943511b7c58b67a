#include "ui/Controller.h"

#include "ui/ExternalRun.h"
#include "ui/ModeChoice.h"
#include "ui/ProgressJson.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"
#include "ui/charts/Exportable.h"

#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/EngineShapes.h"
#include "core/run/Experiment.h"
#include "core/run/Options.h"
#include "core/run/RunConfig.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

namespace sgdscope::ui {

/// One first look: when done, its batch.
struct Controller::Preview
{
    std::mutex mutex;
    std::optional<MetricsBatch> result;
};

Controller::Controller(QObject* parent)
    : QObject(parent)
    , m_cache(std::make_shared<DataCache>())
{
    m_timer.setInterval(33);
    connect(&m_timer, &QTimer::timeout, this, &Controller::drain);
    m_timer.start();
    m_previewTimer.setSingleShot(true);
    m_previewTimer.setInterval(250);
    connect(&m_previewTimer, &QTimer::timeout, this, [this] {
        if (m_state != State::Idle || !m_previewEnabled)
            return;
        auto preview = std::make_shared<Preview>();
        m_preview = preview;
        auto cache = m_cache;
        const SessionSettings s = m_settings;
        std::unique_ptr<QThread> thread(QThread::create([preview, cache, s] {
            MetricsBatch batch = previewSession(cache, s);
            std::lock_guard lock(preview->mutex);
            preview->result = std::move(batch);
        }));
        thread->setObjectName(QStringLiteral("sgdscope first look"));
        thread->start(QThread::LowPriority);
        m_stopping.push_back(std::move(thread)); // joined like a stopped run's
    });
}

Controller::~Controller()
{
    stopCurrent();
    waitForThreads();
}

QStringList Controller::presetNames()
{
    QStringList names;
    for (const auto& n : sgdscope::presetNames())
        names << QString::fromStdString(n);
    return names;
}

Controller::PresetInfo Controller::presetInfo(
    const QString& name, const QList<QPair<QString, QString>>& options, DataCache* cache)
{
    PresetInfo info;
    info.name = name;
    try {
        SessionSettings settings;
        settings.preset = name;
        settings.options = options;
        settings.options.removeIf([](const QPair<QString, QString>& o) { return o.first == QStringLiteral("slow"); });
        settings.workers = 1; // (the model and data do not depend on the workers)
        const RunConfig c = sessionOptionsConfig(settings);
        std::vector<int> widths = c.layers;
        info.trainSamples = trainingSetSize(c);
        if (const auto data = cache ? findCachedData(*cache, c) : nullptr) {
            info.trainSamples = data->train.size();
            widths = modelWidths(c, data->train); // as prepareRun builds the model
        }
        info.batch = c.batch > 0 ? c.batch : static_cast<int>(info.trainSamples);
        info.learningRate = c.lr;
        info.classification = c.loss == LossKind::SoftmaxCrossEntropy;
        QString layers;
        for (std::size_t i = 0; i < widths.size(); ++i)
            layers += (i ? QStringLiteral("-") : QString()) + QString::number(widths[i]);
        const QString data = c.data.empty()
            ? QString::fromStdString(toString(c.dataset))
            : QStringLiteral("%1 (%2)").arg(
                QFileInfo(QString::fromStdString(c.data)).fileName(), QString::fromStdString(toString(c.dataset)));
        // (The learning rate has a slider of its own: the preset's would contradict it.)
        info.summary = QStringLiteral("%1: MLP %2 %3, %4%5")
                           .arg(data, layers.isEmpty() ? tr("(widths from the data)") : layers,
                               QString::fromStdString(toString(c.activation)), QString::fromStdString(toString(c.loss)))
                           .arg(c.momentum > 0 ? QStringLiteral(", momentum %1").arg(c.momentum) : QString());
    } catch (const std::exception& e) {
        info.problem = QString::fromUtf8(e.what());
        info.summary = info.problem;
    }
    return info;
}

QString Controller::reproducingCommand(int* liveChanges, std::int64_t* syncUpdates) const
{
    if (m_state == State::Idle && m_updates[LeftColumn] == 0 && m_updates[RightColumn] == 0)
        return {};
    if (liveChanges)
        *liveChanges = m_liveChanges;
    // As many sync updates as the sync column has made (its bits are the same from run to run); without a sync
    // column, the run's own length.
    const auto syncColumn
        = std::find(m_started.modes.names.begin(), m_started.modes.names.end(), QStringLiteral("sync"));
    const std::int64_t updates = m_started.engine == QStringLiteral("mpi") || syncColumn == m_started.modes.names.end()
        ? 0
        : m_updates[static_cast<std::size_t>(syncColumn - m_started.modes.names.begin())];
    if (syncUpdates)
        *syncUpdates = updates;
    // The program by name if the shell finds it, else where this one is (e.g. build/app/sgdscope).
    QString program = QStringLiteral("sgdscope");
    if (QStandardPaths::findExecutable(program).isEmpty() && QCoreApplication::applicationName() == program)
        program = QCoreApplication::applicationFilePath();
    return headlessCommand(m_started, updates, QStringLiteral("run"), program);
}

void Controller::setPreviewEnabled(bool enabled)
{
    m_previewEnabled = enabled;
    m_preview.reset();
    m_previewKey.clear();
    m_previewTimer.stop();
    if (enabled)
        preview();
}

namespace {
/// What a first look depends on: the model, the data and the seed; and what it checks as Start would (the
/// workers, batch, micro-batches and platform).
QString firstLookKey(const SessionSettings& s)
{
    QString key = s.preset + QLatin1Char('|') + QString::number(s.seed) + QLatin1Char('|') + QString::number(s.workers)
        + QLatin1Char('|') + QString::number(s.globalBatch()) + QLatin1Char('|') + QString::number(s.accum)
        + QLatin1Char('|') + s.engine + QLatin1Char('|') + s.cluster + QLatin1Char('|') + s.platformFile;
    for (const auto& [name, value] : s.options)
        key += QLatin1Char('|') + name + QLatin1Char('=') + value;
    return key;
}
} // namespace

void Controller::adoptFirstLook(const MetricsBatch& batch)
{
    if (m_state != State::Idle || !m_previewEnabled || !batch.error.isEmpty())
        return;
    m_previewKey = firstLookKey(m_settings);
    m_previewTimer.stop();
    m_preview.reset();
    emit cleared();
    emit metricsReady(batch);
}

void Controller::preview()
{
    if (m_state != State::Idle || !m_previewEnabled)
        return;
    const QString key = firstLookKey(m_settings);
    if (key == m_previewKey)
        return;
    m_previewKey = key;
    m_preview.reset(); // an older one's result is not shown
    m_previewTimer.start();
}

void Controller::previewDone()
{
    if (!m_preview || m_state != State::Idle)
        return;
    std::optional<MetricsBatch> result;
    {
        std::lock_guard lock(m_preview->mutex);
        result.swap(m_preview->result);
    }
    if (!result)
        return;
    m_preview.reset();
    emit cleared(); // the previous first look's points go
    if (!result->error.isEmpty()) {
        emit previewFailed(result->error);
        return;
    }
    emit metricsReady(*result);
}

int Controller::machineCores()
{
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::pair<double, double> Controller::windowRange(const char* name)
{
    const OptionSpec& spec = option(name);
    if (spec.windowLow != 0.0 || spec.windowHigh != 0.0)
        return {spec.windowLow, spec.windowHigh};
    return {spec.min, spec.max};
}

QString Controller::optionHelp(const char* name)
{
    return QString::fromStdString(option(name).help);
}

int Controller::windowMaximum(const char* name)
{
    const OptionSpec& spec = option(name);
    return spec.windowMax > 0 ? spec.windowMax : static_cast<int>(spec.max);
}

void Controller::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    emit stateChanged(state);
}

void Controller::setSettings(const SessionSettings& settings)
{
    m_settings = settings;
    const bool active = (m_session || m_external)
        && (m_state == State::Running || m_state == State::Paused || m_state == State::Loading);
    if (!active) {
        emit restartNeeded(false);
        if (m_state == State::Idle)
            preview();
        return;
    }
    if (settings.needsRestartComparedTo(m_running)) {
        emit restartNeeded(true);
        return;
    }
    emit restartNeeded(false);
    SessionSettings live = settings;
    if (live.trainsDifferentlyFrom(m_running))
        ++m_liveChanges;
    m_running = live;
    if (m_external) {
        Json command = Json::object();
        command["settings"] = sessionSettingsJson(live);
        m_external->send(QByteArray::fromStdString(dumpJson(command, -1)));
        return;
    }
    {
        std::lock_guard lock(m_session->mutex);
        m_session->pending = live;
    }
    m_session->wake.notify_all();
}

void Controller::start()
{
    if (m_state == State::Paused) {
        m_digests = {}; // they are the pause's: training goes on
        if (m_external) {
            m_external->send("{\"pause\": false}");
        } else {
            m_session->paused = false;
            m_session->wake.notify_all();
        }
        setState(State::Running);
        return;
    }
    if (m_state == State::Running || m_state == State::Loading)
        return;
    stopCurrent();
    emit cleared();
    m_running = m_settings;
    m_started = m_settings;
    m_liveChanges = 0;
    m_digests = {};
    m_updates = {};
    m_preview.reset();
    m_previewKey.clear();
    m_previewTimer.stop();
    emit restartNeeded(false);
    if (m_settings.external()) {
        startExternal();
        return;
    }
    m_session = std::make_shared<SessionShared>();
    m_thread.reset(QThread::create(runTrainingSession, m_session, m_cache, m_settings));
    m_thread->setObjectName(QStringLiteral("sgdscope training"));
    m_thread->start();
    setState(State::Loading);
}

void Controller::pause()
{
    if (m_state != State::Running)
        return;
    if (m_external && m_running.engine == QStringLiteral("mpi")) {
        // An MPI job cannot pause (its processes wait for each other with a timeout): it finishes, and its
        // results stay in its run folder.
        m_external->stop();
        return;
    }
    if (m_external)
        m_external->send("{\"pause\": true}");
    else
        m_session->paused = true;
    setState(State::Paused);
}

void Controller::togglePause()
{
    if (m_state == State::Running)
        pause();
    else
        start();
}

void Controller::reset()
{
    stopCurrent();
    emit cleared();
    emit restartNeeded(false);
    m_digests = {};
    m_updates = {};
    setState(State::Idle);
    m_previewKey.clear();
    preview();
}

void Controller::stopCurrent()
{
    if (m_session) {
        m_session->stop = true;
        m_session->wake.notify_all();
    }
    if (m_thread)
        m_stopping.push_back(std::move(m_thread));
    m_session.reset();
    if (m_external) {
        disconnect(m_external.get(), nullptr, this, nullptr);
        m_external->stop();
        m_stoppingExternal.push_back(std::move(m_external));
    }
    reapFinishedThreads();
}

void Controller::reapFinishedThreads()
{
    std::erase_if(m_stopping, [](const std::unique_ptr<QThread>& t) {
        if (!t->isFinished())
            return false;
        t->wait();
        return true;
    });
    std::erase_if(m_stoppingExternal, [](const std::unique_ptr<ExternalRun>& r) { return !r->running(); });
}

int Controller::liveThreads() const
{
    int n = 0;
    for (const auto& t : m_stopping)
        n += t->isFinished() ? 0 : 1;
    for (const auto& r : m_stoppingExternal)
        n += r->running() ? 1 : 0;
    return n + (m_thread && !m_thread->isFinished() ? 1 : 0) + (m_external && m_external->running() ? 1 : 0);
}

void Controller::waitForThreads()
{
    for (const auto& t : m_stopping)
        t->wait();
    m_stopping.clear();
    for (const auto& r : m_stoppingExternal)
        r->waitForEnd(15000);
    m_stoppingExternal.clear();
    if (m_thread && !m_session) {
        m_thread->wait();
        m_thread.reset();
    }
}

void Controller::drain()
{
    reapFinishedThreads();
    previewDone();
    MetricsBatch batch;
    if (m_external) {
        batch = m_external->take();
        if (!m_externalNotes.isEmpty() && batch.ready) {
            batch.notes = m_externalNotes + batch.notes;
            m_externalNotes.clear();
        }
        handleBatch(batch);
        return;
    }
    if (!m_session)
        return;
    {
        std::lock_guard lock(m_session->mutex);
        std::swap(batch, m_session->staging);
    }
    handleBatch(batch);
}

void Controller::handleBatch(MetricsBatch& batch)
{
    if (!batch.error.isEmpty()) {
        setState(State::Failed);
        emit errorOccurred(batch.error);
    } else if (batch.ready && m_state == State::Loading) {
        setState(m_session && m_session->paused ? State::Paused : State::Running);
    }
    if (m_session && m_session->finished && m_state == State::Running)
        setState(State::Finished);
    for (std::size_t m = 0; m < modeCount; ++m) {
        if (batch.status[m].valid)
            m_updates[m] = batch.status[m].updates;
        if (!batch.digests[m].isEmpty() && m_state == State::Paused) // (a late one after Resume is stale)
            m_digests[m] = batch.digests[m];
    }
    if (!batch.empty())
        emit metricsReady(batch);
}

QString Controller::externalCommand() const
{
    return m_external ? m_external->commandLine() : QString();
}

void Controller::startExternal()
{
    const QString program = m_program.isEmpty() ? QCoreApplication::applicationFilePath() : m_program;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    m_runFolder.clear();
    m_externalNotes.clear();
    if (m_settings.engine == QStringLiteral("sim")) {
        m_external = std::make_unique<ExternalRun>(ExternalRun::Kind::SessionChild);
        m_external->start(program, {QStringLiteral("--session-child")}, environment,
            QByteArray::fromStdString(dumpJson(sessionSettingsJson(m_settings), -1) + "\n"));
    } else {
        // An MPI job: sync and local-sgd on P processes, the others on a parameter server and P - 1 workers; one
        // mode after the other; rank 0 streams what the window shows and writes the run's files into a folder of
        // its own.
        const SessionSettings& s = m_settings;
        const QString base = QStandardPaths::writableLocation(QStandardPaths::TempLocation);
        m_runFolder = QDir(base).filePath(
            QStringLiteral("sgdscope-runs/mpi-%1")
                .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"))));
        QStringList args = mpirunArguments(s, 0, m_runFolder, program);
        args << QStringLiteral("--progress") << QStringLiteral("-");
        // A target ends each mode of the job when reached (headless runs stop at their target).
        if (s.targetAccuracy >= 0 && presetInfo(s.preset, s.options).classification)
            args << QStringLiteral("--target-accuracy") << QString::number(s.targetAccuracy, 'g', 17);
        else if (s.targetLoss >= 0)
            args << QStringLiteral("--target-loss") << QString::number(s.targetLoss, 'g', 17);
        if (::geteuid() == 0) {
            // Open MPI refuses root unless told twice; CI and containers run as root.
            environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
            environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
        }
        m_external = std::make_unique<ExternalRun>(ExternalRun::Kind::MpiJob);
        // The job streams the modes it runs in column order (headlessArguments asks for those it can run).
        const QList<int> columns = mpiRunnableColumns(s);
        if (!columns.isEmpty())
            m_external->setColumns(columns);
        m_external->start(QStringLiteral("mpirun"), args, environment);
        QStringList shapes;
        int fewestWorkers = s.workers;
        for (const int c : columns) {
            const Mode m = columnMode(s.modes, c);
            const int workers = mpiWorkersFor(m, s.workers);
            fewestWorkers = std::min(fewestWorkers, workers);
            const QString team = workers == 1 ? tr("1 worker") : tr("%1 workers").arg(workers);
            shapes << (workers == s.workers ? tr("%1 on %2").arg(modeTitle(m), team)
                                            : tr("%1 on a parameter server and %2").arg(modeTitle(m), team));
        }
        m_externalNotes << (shapes.size() > 1 ? tr("MPI job of %1: %2, one after the other. Results in %3.")
                                              : tr("MPI job of %1: %2. Results in %3."))
                               .arg(s.workers == 1 ? tr("1 process") : tr("%1 processes").arg(s.workers),
                                   shapes.join(tr(", then ")), m_runFolder);
        if (columns.size() < modeCount)
            m_externalNotes << tr("A job of 1 process has no parameter server: only the column that needs none "
                                  "trains.");
        if (s.lockFree)
            m_externalNotes << tr("Lock-free is for threads: MPI's pushing modes go through a parameter server.");
        const bool straggler = s.slowWorker >= 0 && s.slowFactor > 1.0;
        if (straggler && s.slowWorker >= fewestWorkers)
            m_externalNotes << tr("No straggler: the modes with a parameter server have workers 0 to %1 in a job of "
                                  "%2 processes, so worker %3 does not exist in every mode; pick a lower one.")
                                   .arg(fewestWorkers - 1)
                                   .arg(s.workers)
                                   .arg(s.slowWorker);
    }
    connect(m_external.get(), &ExternalRun::ended, this, &Controller::externalEnded);
    setState(State::Loading);
}

void Controller::externalEnded(int exitCode, bool crashed)
{
    if (!m_external)
        return;
    drain();
    if (!m_external)
        return;
    if (m_state == State::Failed)
        return;
    if (m_external->stopping() || (exitCode == 0 && !crashed)) {
        setState(State::Finished);
        return;
    }
    setState(State::Failed);
    const QString tail = m_external->errorTail();
    emit errorOccurred(tr("%1 ended with exit code %2%3")
                           .arg(m_running.engine == QStringLiteral("mpi") ? tr("The MPI job") : tr("The simulation"))
                           .arg(exitCode)
                           .arg(tail.isEmpty() ? QString() : QStringLiteral(":\n") + tail));
}

} // namespace sgdscope::ui
