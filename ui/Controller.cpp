#include "ui/Controller.h"

#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/Experiment.h"
#include "core/run/RunConfig.h"
#include "core/run/SettingsCheck.h"
#include "core/train/ReductionPlan.h"

#include <QThread>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

namespace sgdscope::ui {

namespace {
constexpr double sliceSeconds = 0.04; // of each mode's clock, alternating
constexpr std::size_t maxPointsPerFlush = 2048; // per mode and slice; the rest is thinned evenly
constexpr std::size_t maxStalenessBins = 512;
constexpr std::size_t maxBinsStaged = 64 * 3000; // three seconds of 64 workers, if the GUI does not drain
constexpr int trainingNice = 10; // the window's thread stays ahead of the workers (weight 1024 against 110)
} // namespace

/// Data sets loaded by earlier runs, so Reset does not reload Fashion-MNIST.
struct DataCache
{
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<const DataSplit>> sets;
};

/// State shared by the GUI and one run's training thread.
struct SessionShared
{
    std::uint64_t runId = 0;
    std::atomic<bool> stop {false};
    std::atomic<bool> paused {false};
    std::atomic<bool> finished {false};
    std::mutex mutex; // guards staging and pending
    std::condition_variable wake;
    MetricsBatch staging;
    std::optional<SessionSettings> pending;
};

namespace {

QString settingsText(const SessionSettings& s)
{
    QString text = QStringLiteral("P=%1 B=%2 K=%3 lr=%4")
                       .arg(s.workers)
                       .arg(s.batch)
                       .arg(s.accum)
                       .arg(s.learningRate, 0, 'g', 3);
    if (s.slowWorker >= 0)
        text += QStringLiteral(" w%1\u00d7%2").arg(s.slowWorker).arg(s.slowFactor, 0, 'g', 3);
    if (s.jitter > 0)
        text += QStringLiteral(" jitter %1").arg(s.jitter, 0, 'g', 2);
    return text;
}

/// Collects one mode's updates during a slice, on the training thread, and flushes them to the
/// staging buffer in one short lock per slice.
class SliceObserver : public TrainingObserver
{
public:
    SliceObserver(SessionShared& shared, int mode)
        : m_shared(shared)
        , m_mode(mode)
    {
    }

    void onUpdate(const UpdateRecord& u, std::span<const WorkerSpan> workers) override
    {
        m_points.push_back({u.index, u.samples, u.seconds, u.batchLoss, u.staleness});
        for (const WorkerSpan& w : workers) {
            addTime(w.worker, w.computeStart - w.idleBefore, w.computeStart, TimeBin::Wait);
            addTime(w.worker, w.computeStart, w.computeEnd, TimeBin::Compute);
            addTime(w.worker, w.computeEnd, w.readyAt, TimeBin::Delay);
            addTime(w.worker, w.readyAt, w.applyStart, TimeBin::Wait);
            addTime(w.worker, w.applyStart, w.applyEnd, TimeBin::Apply);
        }
        m_lastBatchLoss = u.batchLoss;
    }
    void onEvaluation(const EvaluationRecord& e) override
    {
        m_evals.push_back({e.index, e.samples, e.seconds, e.trainLoss, e.trainAccuracy});
        m_lastEvalLoss = e.trainLoss;
    }
    bool stopRequested() override { return m_shared.stop.load(std::memory_order_relaxed); }

    void flush(const Trainer& trainer)
    {
        ModeStatus status;
        status.valid = true;
        status.updates = trainer.updates();
        status.samples = trainer.samples();
        status.seconds = trainer.seconds();
        m_history.emplace_back(trainer.seconds(), trainer.updates(), trainer.samples());
        while (m_history.size() > 2 && trainer.seconds() - std::get<0>(m_history[1]) >= 1.0)
            m_history.pop_front();
        const auto& [s0, u0, n0] = m_history.front();
        const double dt = trainer.seconds() - s0;
        if (dt > 0) {
            status.updatesPerSecond = static_cast<double>(trainer.updates() - u0) / dt;
            status.samplesPerSecond = static_cast<double>(trainer.samples() - n0) / dt;
        }
        status.lastLoss = std::isnan(m_lastEvalLoss) ? m_lastBatchLoss : m_lastEvalLoss;
        double busy = 0, idle = 0;
        for (const WorkerTotals& w : trainer.workerTotals()) {
            status.workers.push_back({w.busySeconds, w.idleSeconds, w.applySeconds, w.updates});
            busy += w.busySeconds;
            idle += w.idleSeconds;
        }
        status.idleFraction = busy + idle > 0 ? idle / (busy + idle) : 0.0;
        status.meanStaleness = trainer.staleness().mean();
        status.maxStaleness = trainer.staleness().max();
        const auto& counts = trainer.staleness().counts();
        status.stalenessCounts.assign(
            counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(std::min(counts.size(), maxStalenessBins)));
        status.diverged = trainer.diverged();
        status.divergedAt = trainer.divergedAt();
        status.finished = trainer.finished();

        // Thin this slice's points evenly if there are many (fast tiny models: ~20k per slice).
        if (m_points.size() > maxPointsPerFlush) {
            const std::size_t stride = (m_points.size() + maxPointsPerFlush - 1) / maxPointsPerFlush;
            std::size_t kept = 0;
            for (std::size_t i = 0; i < m_points.size(); i += stride)
                m_points[kept++] = m_points[i];
            m_points.resize(kept);
        }
        std::vector<TimeBin> bins;
        for (std::size_t w = 0; w < m_bins.size(); ++w) {
            for (std::size_t i = 0; i < m_bins[w].bins.size(); ++i) {
                TimeBin b;
                b.worker = static_cast<int>(w);
                b.bin = m_bins[w].first + static_cast<std::int64_t>(i);
                b.seconds = m_bins[w].bins[i];
                bins.push_back(b);
            }
            m_bins[w].bins.clear();
        }
        std::sort(bins.begin(), bins.end(), [](const TimeBin& x, const TimeBin& y) { return x.bin < y.bin; });

        std::lock_guard lock(m_shared.mutex);
        MetricsBatch& b = m_shared.staging;
        const auto m = static_cast<std::size_t>(m_mode);
        auto append = [](auto& to, auto& from) {
            to.insert(to.end(), from.begin(), from.end());
            from.clear();
        };
        append(b.points[m], m_points);
        append(b.evals[m], m_evals);
        append(b.timeline[m], bins);
        // If the GUI does not drain (minimised window), keep the staging buffer bounded too.
        if (b.points[m].size() > 64 * maxPointsPerFlush) {
            std::size_t kept = 0;
            for (std::size_t i = 0; i < b.points[m].size(); i += 2)
                b.points[m][kept++] = b.points[m][i];
            b.points[m].resize(kept);
        }
        if (b.timeline[m].size() > maxBinsStaged)
            b.timeline[m].erase(
                b.timeline[m].begin(), b.timeline[m].end() - static_cast<std::ptrdiff_t>(maxBinsStaged));
        b.status[m] = std::move(status);
    }

private:
    /// Adds [a, b) of one kind to the worker's millisecond bins.
    void addTime(int worker, double a, double b, TimeBin::Kind kind)
    {
        if (!(b > a))
            return;
        if (static_cast<std::size_t>(worker) >= m_bins.size())
            m_bins.resize(static_cast<std::size_t>(worker) + 1);
        WorkerBins& wb = m_bins[static_cast<std::size_t>(worker)];
        // Step by bin index (not by the floating end of the previous piece, which can round back).
        const auto first = static_cast<std::int64_t>(std::floor(a / TimeBin::width));
        const auto last = static_cast<std::int64_t>(std::floor(b / TimeBin::width));
        if (wb.bins.empty())
            wb.first = first;
        if (first < wb.first) {
            wb.bins.insert(
                wb.bins.begin(), static_cast<std::size_t>(wb.first - first), std::array<float, TimeBin::KindCount> {});
            wb.first = first;
        }
        if (last - wb.first >= static_cast<std::int64_t>(wb.bins.size()))
            wb.bins.resize(static_cast<std::size_t>(last - wb.first + 1), std::array<float, TimeBin::KindCount> {});
        for (std::int64_t bin = first; bin <= last; ++bin) {
            const double lo = std::max(a, static_cast<double>(bin) * TimeBin::width);
            const double hi = std::min(b, static_cast<double>(bin + 1) * TimeBin::width);
            if (hi > lo)
                wb.bins[static_cast<std::size_t>(bin - wb.first)][kind] += static_cast<float>(hi - lo);
        }
    }

    struct WorkerBins
    {
        std::int64_t first = 0;
        std::vector<std::array<float, TimeBin::KindCount>> bins;
    };

    SessionShared& m_shared;
    int m_mode;
    std::vector<LossPoint> m_points;
    std::vector<EvalPoint> m_evals;
    std::vector<WorkerBins> m_bins; // per worker, this slice's milliseconds
    std::deque<std::tuple<double, std::int64_t, std::int64_t>> m_history;
    double m_lastBatchLoss = 0.0;
    double m_lastEvalLoss = std::nan("");
};

TrainerSettings trainerSettings(const PreparedRun& run, const SessionSettings& s)
{
    TrainerSettings t = run.settings;
    const auto n = run.problem->train().size();
    t.workers = s.workers;
    t.batch = s.batch > 0 ? static_cast<int>(std::min<std::int64_t>(s.batch, n)) : run.settings.batch;
    t.accum = s.accum;
    t.learningRate = s.learningRate > 0 ? s.learningRate : run.settings.learningRate;
    t.stragglers.clear();
    if (s.slowWorker >= 0 && s.slowWorker < s.workers && s.slowFactor > 1.0)
        t.stragglers.push_back({s.slowWorker, s.slowFactor});
    t.jitter = s.jitter;
    t.asyncApply = s.lockFree ? AsyncApply::LockFree : AsyncApply::Lock;
    // At least 8 chunks per batch in the window, so that up to 8 workers always have a share of a sync
    // update to compute (the chunk still depends on the batch and model only, never on P or K).
    t.chunk = std::min(defaultChunkSize(t.batch, run.problem->spec), std::max(1, (t.batch + 7) / 8));
    t.sampleBudget = std::numeric_limits<std::int64_t>::max(); // the window trains until paused or reset
    t.evalEverySamples = std::max<std::int64_t>(n, 200LL * t.batch);
    return t;
}

QStringList notesFor(const TrainerSettings& t)
{
    const int chunk = t.chunk;
    const ChunkLayout layout(t.batch, chunk);
    QStringList notes;
    notes << QStringLiteral(
        "Sync splits each batch of %1 into %2 chunk%3 of %4 samples (the unit of its exact, fixed-order sum)%5.")
                 .arg(t.batch)
                 .arg(layout.chunkCount)
                 .arg(layout.chunkCount == 1 ? QString() : QStringLiteral("s"))
                 .arg(layout.chunkSize)
                 .arg(t.workers > layout.chunkCount
                         ? QStringLiteral("; workers beyond %1 have nothing to do and idle").arg(layout.chunkCount)
                         : QString());
    return notes;
}

std::string cacheKey(const RunConfig& c)
{
    return toString(c.dataset) + "|" + c.data + "|" + std::to_string(c.samples) + "|" + std::to_string(c.seed) + "|"
        + toString(c.loss);
}

void trainingThread(std::shared_ptr<SessionShared> shared, std::shared_ptr<DataCache> cache, SessionSettings settings)
{
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), trainingNice); // OpenMP workers inherit it
    auto report = [&](auto&& fill) {
        std::lock_guard lock(shared->mutex);
        fill(shared->staging);
    };
    PreparedRun run;
    try {
        ConfigBuilder builder;
        builder.applyPreset(settings.preset.toStdString(), "preset");
        builder.applyOption("seed", std::to_string(settings.seed));
        const RunConfig config = builder.resolve();
        std::shared_ptr<const DataSplit> data;
        {
            std::lock_guard lock(cache->mutex);
            if (auto it = cache->sets.find(cacheKey(config)); it != cache->sets.end())
                data = it->second;
        }
        if (!data) {
            data = std::make_shared<DataSplit>(loadData(config));
            std::lock_guard lock(cache->mutex);
            cache->sets[cacheKey(config)] = data;
        }
        run = prepareRun(config, data);
    } catch (const std::exception& e) {
        report([&](MetricsBatch& b) { b.error = QString::fromUtf8(e.what()); });
        shared->finished = true;
        return;
    }
    if (shared->stop)
        return;
    std::array<std::unique_ptr<Trainer>, modeCount> trainers;
    std::array<std::unique_ptr<SliceObserver>, modeCount> observers;
    try {
        const TrainerSettings t = trainerSettings(run, settings);
        trainers[SyncMode] = makeTrainer(Mode::Sync, run.problem, t);
        trainers[AsyncMode] = makeTrainer(Mode::Async, run.problem, t);
        for (int m = 0; m < modeCount; ++m)
            observers[static_cast<std::size_t>(m)] = std::make_unique<SliceObserver>(*shared, m);
        report([&](MetricsBatch& b) {
            b.ready = true;
            b.notes = notesFor(t);
        });
        while (!shared->stop.load()) {
            if (shared->paused.load()) {
                std::unique_lock lock(shared->mutex);
                shared->wake.wait_for(lock, std::chrono::milliseconds(50));
                continue;
            }
            std::optional<SessionSettings> pending;
            {
                std::lock_guard lock(shared->mutex);
                pending.swap(shared->pending);
            }
            if (pending) {
                const TrainerSettings t2 = trainerSettings(run, *pending);
                for (int m = 0; m < modeCount; ++m) {
                    Trainer& tr = *trainers[static_cast<std::size_t>(m)];
                    validateSettings(t2, *run.problem);
                    tr.reconfigure(t2);
                    report([&](MetricsBatch& b) {
                        b.markers[static_cast<std::size_t>(m)].push_back(
                            {tr.updates(), tr.samples(), tr.seconds(), settingsText(*pending)});
                        b.notes = notesFor(t2);
                    });
                }
            }
            bool anyRunning = false;
            for (int m = 0; m < modeCount && !shared->stop.load(); ++m) {
                Trainer& tr = *trainers[static_cast<std::size_t>(m)];
                if (tr.finished())
                    continue;
                anyRunning = true;
                tr.run(RunLimits {std::numeric_limits<std::int64_t>::max(), sliceSeconds},
                    *observers[static_cast<std::size_t>(m)]);
                observers[static_cast<std::size_t>(m)]->flush(tr);
            }
            if (!anyRunning) {
                // Both modes have stopped (diverged): wait for a reset.
                shared->finished = true;
                std::unique_lock lock(shared->mutex);
                shared->wake.wait_for(lock, std::chrono::milliseconds(100));
            }
        }
    } catch (const std::exception& e) {
        report([&](MetricsBatch& b) { b.error = QString::fromUtf8(e.what()); });
        shared->finished = true;
    }
}

} // namespace

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
    m_session->runId = ++m_runId;
    m_running = m_settings;
    emit restartNeeded(false);
    m_thread = QThread::create(trainingThread, m_session, m_cache, m_settings);
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
    ++m_runId; // anything still staged belongs to the old run
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
    if (m_thread) {
        m_stopping.push_back(m_thread);
        m_thread = nullptr;
    }
    m_session.reset();
    reapFinishedThreads();
}

void Controller::reapFinishedThreads()
{
    std::erase_if(m_stopping, [](QThread* t) {
        if (!t->isFinished())
            return false;
        t->wait();
        delete t;
        return true;
    });
}

int Controller::liveThreads() const
{
    int n = 0;
    for (QThread* t : m_stopping)
        n += t->isFinished() ? 0 : 1;
    return n + (m_thread && !m_thread->isFinished() ? 1 : 0);
}

void Controller::waitForThreads()
{
    for (QThread* t : m_stopping) {
        t->wait();
        delete t;
    }
    m_stopping.clear();
    if (m_thread && !m_session) {
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
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
    batch.runId = m_session->runId;
    if (batch.runId != m_runId)
        return;
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
