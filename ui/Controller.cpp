#include "ui/Controller.h"

#include "ui/TrainingSession.h"

#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/Options.h"
#include "core/run/RunConfig.h"

#include <algorithm>
#include <thread>

namespace sgdscope::ui {

Controller::Controller(QObject* parent)
    : QObject(parent)
    , m_cache(std::make_shared<DataCache>())
{
    m_timer.setInterval(33);
    connect(&m_timer, &QTimer::timeout, this, &Controller::drain);
    m_timer.start();
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

Controller::PresetInfo Controller::presetInfo(const QString& name)
{
    PresetInfo info;
    info.name = name;
    try {
        ConfigBuilder builder;
        builder.applyPreset(name.toStdString(), "preset");
        const RunConfig c = builder.resolve();
        info.trainSamples = trainingSetSize(c);
        info.batch = c.batch > 0 ? c.batch : static_cast<int>(info.trainSamples);
        info.learningRate = c.lr;
        QString layers;
        for (std::size_t i = 0; i < c.layers.size(); ++i)
            layers += (i ? QStringLiteral("-") : QString()) + QString::number(c.layers[i]);
        info.summary = QStringLiteral("%1: MLP %2 %3, %4, lr %5%6")
                           .arg(QString::fromStdString(toString(c.dataset)), layers,
                               QString::fromStdString(toString(c.activation)), QString::fromStdString(toString(c.loss)))
                           .arg(c.lr)
                           .arg(c.momentum > 0 ? QStringLiteral(", momentum %1").arg(c.momentum) : QString());
    } catch (const std::exception& e) {
        info.summary = QString::fromUtf8(e.what());
    }
    return info;
}

int Controller::machineCores()
{
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
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
    const bool active
        = m_session && (m_state == State::Running || m_state == State::Paused || m_state == State::Loading);
    if (!active) {
        emit restartNeeded(false);
        return;
    }
    if (settings.needsRestartComparedTo(m_running)) {
        emit restartNeeded(true);
        return;
    }
    emit restartNeeded(false);
    SessionSettings live = settings;
    m_running = live;
    {
        std::lock_guard lock(m_session->mutex);
        m_session->pending = live;
    }
    m_session->wake.notify_all();
}

void Controller::start()
{
    if (m_state == State::Paused) {
        m_session->paused = false;
        m_session->wake.notify_all();
        setState(State::Running);
        return;
    }
    if (m_state == State::Running || m_state == State::Loading)
        return;
    stopCurrent();
    emit cleared();
    m_session = std::make_shared<SessionShared>();
    m_running = m_settings;
    emit restartNeeded(false);
    m_thread.reset(QThread::create(runTrainingSession, m_session, m_cache, m_settings));
    m_thread->setObjectName(QStringLiteral("sgdscope training"));
    m_thread->start();
    setState(State::Loading);
}

void Controller::pause()
{
    if (m_state != State::Running)
        return;
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
    setState(State::Idle);
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
}

int Controller::liveThreads() const
{
    int n = 0;
    for (const auto& t : m_stopping)
        n += t->isFinished() ? 0 : 1;
    return n + (m_thread && !m_thread->isFinished() ? 1 : 0);
}

void Controller::waitForThreads()
{
    for (const auto& t : m_stopping)
        t->wait();
    m_stopping.clear();
    if (m_thread && !m_session) {
        m_thread->wait();
        m_thread.reset();
    }
}

void Controller::drain()
{
    reapFinishedThreads();
    if (!m_session)
        return;
    MetricsBatch batch;
    {
        std::lock_guard lock(m_session->mutex);
        std::swap(batch, m_session->staging);
    }
    if (!batch.error.isEmpty()) {
        setState(State::Failed);
        emit errorOccurred(batch.error);
    } else if (batch.ready && m_state == State::Loading) {
        setState(m_session->paused ? State::Paused : State::Running);
    }
    if (m_session->finished && m_state == State::Running)
        setState(State::Finished);
    if (!batch.empty())
        emit metricsReady(batch);
}

} // namespace sgdscope::ui
