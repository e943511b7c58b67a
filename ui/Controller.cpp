#include "ui/Controller.h"

#include "ui/ExternalRun.h"
#include "ui/ProgressJson.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include <QCoreApplication>
#include <QStandardPaths>

#include <algorithm>
#include <mutex>

namespace sgdscope::ui {

Controller::Controller(QObject* parent)
    : QObject(parent)
    , m_cache(std::make_shared<DataCache>())
{
    m_timer.setInterval(33);
    connect(&m_timer, &QTimer::timeout, this, &Controller::drain);
    m_timer.start();
    m_previewTimer.setSingleShot(true);
    m_previewTimer.setInterval(250);
    connect(&m_previewTimer, &QTimer::timeout, this, &Controller::takeFirstLook);
}

Controller::~Controller()
{
    stopCurrent();
    waitForThreads();
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

} // namespace sgdscope::ui
