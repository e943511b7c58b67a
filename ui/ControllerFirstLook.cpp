// Controller's first look: while idle, the initial parameters' losses on the current settings, taken in the
// background once the settings rest, so that the charts show where a run would start (and a setting that cannot
// work is said before Start).
#include "ui/Controller.h"

#include "ui/TrainingSession.h"

#include <mutex>
#include <optional>

namespace sgdscope::ui {

/// One first look: when done, its batch.
struct Controller::Preview
{
    std::mutex mutex;
    std::optional<MetricsBatch> result;
};

void Controller::takeFirstLook()
{
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

} // namespace sgdscope::ui
