#include "core/engines/mpi/MpiBackupTrainer.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/MpiWorkerPart.h"
#include "core/engines/mpi/RankReport.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/train/BackupRule.h"
#include "core/train/UpdateRule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <unistd.h>

namespace sgdscope {

namespace {
constexpr int parametersTag = 30;
constexpr int messageTag = 31;
constexpr int finalTag = 32;
constexpr std::int32_t gradientKind = 1;
constexpr std::int32_t noteKind = 2;

/// The parameters message: control (1 go, 0 stop), update, when sent, when the previous update had its
/// gradients and whose gradient completed it, when each worker's gradient of it arrived (rank 0's clock; < 0:
/// not taken for it), the parameters.
std::size_t parametersBytes(int workers, std::size_t floats)
{
    return 2 * sizeof(std::int64_t) + (2 + static_cast<std::size_t>(workers)) * sizeof(double) + sizeof(std::int32_t)
        + floats * sizeof(float);
}
} // namespace

MpiBackupTrainer::MpiBackupTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : MpiRootTrainer(std::move(problem), std::move(settings), mode)
    , m_velocity(m_params.size(), 0.0f)
{
    if (mode != Mode::Backup && mode != Mode::Sync)
        throw SgdError(std::string("MpiBackupTrainer: ") + modeName(mode) + " does not run on a parameter server here");
    settingsChanged();
    m_cutter.setWorkers(m_workers);
    m_received.assign(static_cast<std::size_t>(m_workers), 0);
    m_sends.resize(static_cast<std::size_t>(m_workers));
    m_messages.tag = messageTag;
    std::size_t largest = 1024;
    for (int w = 0; w < m_workers; ++w)
        largest = std::max(largest,
            std::size_t {1024 * 1024} + mpiOutgoingBuffers(m_reduction.plan, w).size() * m_params.size() * sizeof(float)
                + static_cast<std::size_t>(m_reduction.chunks.chunkCount) * sizeof(double));
    for (int w = 0; w < m_workers; ++w) {
        m_messages.from.push_back(w + 1);
        m_messages.buffers.emplace_back(largest);
    }
    m_messages.arm();
}

MpiBackupTrainer::~MpiBackupTrainer() = default;

void MpiBackupTrainer::settingsChanged()
{
    requireProcesses();
    m_workers = m_settings.workers;
    m_arrivals.assign(static_cast<std::size_t>(m_workers), -1.0);
    m_reduction.prepare(
        m_settings.batch, chunkSizeFor(m_settings.batch), m_workers, m_settings.accum, passSamples(), m_params.size());
}

void MpiBackupTrainer::pruneSends()
{
    for (auto& sends : m_sends) {
        while (!sends.empty() && m_mpi.done(sends.front().send))
            sends.pop_front();
    }
}

void MpiBackupTrainer::sendParameters(bool go)
{
    pruneSends();
    MpiMessage out;
    out.reserve(parametersBytes(m_workers, m_params.size()));
    out.put(std::int64_t {go ? 1 : 0});
    out.put(m_updates);
    out.put(MpiContext::now());
    out.put(m_completedAt);
    out.put(static_cast<std::int32_t>(m_completedBy));
    for (const double at : m_arrivals)
        out.put(at);
    out.putFloats(m_params.data(), m_params.size());
    // One copy for every worker: each send reads it until that worker has taken it.
    const auto bytes = std::make_shared<const MpiMessage>(std::move(out));
    for (int w = 0; w < m_workers; ++w) {
        auto& sends = m_sends[static_cast<std::size_t>(w)];
        sends.push_back({bytes, m_mpi.startSend(bytes->bytes().data(), bytes->bytes().size(), w + 1, parametersTag)});
    }
}

int MpiBackupTrainer::takeMessage(std::int64_t update)
{
    const int w = m_mpi.receiveAny(m_messages);
    const auto k = static_cast<std::size_t>(w);
    ++m_received[k];
    MpiMessageReader in(m_messages.buffers[k].data(), m_messages.sizes[k]);
    const auto kind = in.get<std::int32_t>();
    const auto its = in.get<std::int64_t>();
    const double sentAt = in.get<double>(); // rank 0's clock
    for (const Span& s : in.getSpans())
        m_cutter.add(s);
    m_cutter.knownUntil(w, sentAt);
    const bool kept = kind == gradientKind && its == update;
    if (kept) {
        takeWorkerPart(in, m_reduction, w, m_params.size());
    }
    m_messages.post(w); // its next message
    return kept ? w : -1;
}

void MpiBackupTrainer::trainSome(const RunLimits&, double, TrainingObserver& observer)
{
    const double windowStart = MpiContext::now();
    const double shift = m_seconds - windowStart; // rank 0's steady clock -> the mode's clock
    sendParameters(true);

    // The first gradients of this update to arrive (backupGradientsKept); the others are dropped (those arriving
    // later, with the next). A worker without samples is never waited for.
    const int needed = backupGradientsKept(m_reduction, mode() == Mode::Backup ? m_settings.backupWorkers : 0);
    std::vector<char> dropped(static_cast<std::size_t>(m_workers), 1);
    std::fill(m_arrivals.begin(), m_arrivals.end(), -1.0);
    for (int kept = 0; kept < needed;) {
        const int w = takeMessage(m_updates);
        if (w < 0)
            continue;
        m_arrivals[static_cast<std::size_t>(w)] = MpiContext::now();
        if (m_reduction.workerSamples(w) == 0)
            continue;
        dropped[static_cast<std::size_t>(w)] = 0;
        m_completedBy = w;
        ++kept;
    }
    m_completedAt = MpiContext::now();

    // The fixed tree's additions over the kept gradients and the update, in the same order as every engine.
    const DroppedGradients left = droppedGradients(m_reduction, dropped);
    double batchLoss = 0.0;
    applyInItsWindow(
        windowStart, shift, m_workers, nullptr,
        [&] {
            batchLoss = m_reduction.applyKept(dropped, MomentumSgd(m_settings.momentum),
                LearningRateRule(m_settings).ofBatch(m_samples), m_params.data(), m_velocity.data(), m_params.size());
        },
        [&](double seconds) {
            UpdateEvent event = syncUpdateEvent(m_settings.batch, batchLoss, seconds);
            event.droppedGradients = left.gradients;
            event.droppedSamples = left.samples;
            return event;
        });
    reportCut(m_cutter, observer, false);
}

void MpiBackupTrainer::endOfRun(TrainingObserver& observer)
{
    // "Stop" to every worker; each answers with the spans it still had and how many messages it sent, and the
    // server takes those it has not taken yet (a worker's last send completes only then).
    sendParameters(false);
    std::vector<RankWork> work {rankWork(0, 0, 0, m_coreTime)};
    std::vector<std::int64_t> sent(static_cast<std::size_t>(m_workers), 0);
    std::vector<std::vector<Span>> lastSpans(static_cast<std::size_t>(m_workers));
    for (int w = 0; w < m_workers; ++w) {
        const std::vector<char> final = m_mpi.receiveWhole(w + 1, finalTag);
        MpiMessageReader in(final.data(), final.size());
        lastSpans[static_cast<std::size_t>(w)] = in.getSpans();
        work.push_back(takeRankWork(in, w + 1));
        sent[static_cast<std::size_t>(w)] = in.get<std::int64_t>();
    }
    // (A worker's spans go to the cutter in time order: those of the messages taken now come first.)
    for (int w = 0; w < m_workers; ++w) {
        while (m_received[static_cast<std::size_t>(w)] < sent[static_cast<std::size_t>(w)])
            takeMessage(-1);
    }
    for (const auto& spans : lastSpans) {
        for (const Span& s : spans)
            m_cutter.add(s);
    }
    m_messages.cancel();
    for (auto& sends : m_sends) {
        for (Outgoing& o : sends)
            m_mpi.complete(o.send);
        sends.clear();
    }
    m_mpi.recordWork(mode(), std::move(work));
    reportCut(m_cutter, observer, true);
}

void serveMpiBackup(std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    MpiContext& mpi = MpiContext::get();
    const CoreTimeSince coreTime;
    const int worker = mpi.rank() - 1;
    MpiWorkerPart part(*problem, settings, worker);
    std::int64_t cursorAt = 0; // the update whose batch part.cursor.next gives
    ParamVector params(problem->layout.paddedSize(), 0.0f);
    StragglerModel stragglers(settings);
    stragglers.prepare();
    const std::atomic<bool> never {false};
    RankSpans spans {mpi, worker, {}};

    // One receive for the parameters is always posted: a straggler delay ends as soon as they come.
    MpiContext::PostedReceives parameters;
    parameters.from = {0};
    parameters.tag = parametersTag;
    parameters.buffers.emplace_back(parametersBytes(settings.workers, params.size()));
    parameters.arm();
    bool arrivedEarly = false; // the receive completed during the delay
    std::deque<std::pair<MpiMessage, MpiContext::PendingSend>> sends;
    std::int64_t computedSamples = 0;
    std::int64_t updates = 0;
    std::int64_t messages = 0;
    while (true) {
        const double waitStart = MpiContext::now();
        if (!arrivedEarly)
            mpi.receiveAny(parameters);
        arrivedEarly = false;
        std::vector<char>& in = parameters.buffers.front();
        // The newest parameters win: those of updates that finished without this worker are skipped.
        while (mpi.waiting(0, parametersTag))
            mpi.receive(in.data(), in.size(), 0, parametersTag);
        const double arrived = MpiContext::now();
        while (!sends.empty() && mpi.done(sends.front().second))
            sends.pop_front();
        MpiMessageReader reader(in.data(), in.size());
        const auto control = reader.get<std::int64_t>();
        const auto update = reader.get<std::int64_t>();
        const double sentAt = reader.get<double>();
        const double completedAt = reader.get<double>();
        const auto completedBy = reader.get<std::int32_t>();
        double mine = -1.0;
        for (int w = 0; w < settings.workers; ++w) {
            const auto at = reader.get<double>();
            if (w == worker)
                mine = at;
        }
        // Waiting for its gradient to reach the server (the wire and the server's queue), for the update to be
        // complete (for whoever completed it; a gradient the update did not take waits for the server), for the
        // server to combine and apply, for the parameters on the wire.
        const double start = mpi.toRoot(waitStart);
        const double end = mpi.toRoot(arrived);
        const double sent = std::clamp(sentAt, start, end);
        const double complete = std::clamp(completedAt, start, sent);
        const double taken = mine < 0 ? start : std::clamp(mine, start, complete);
        spans.addRoot(SpanKind::WaitNetwork, start, taken);
        spans.addRoot(
            mine < 0 ? SpanKind::WaitRead : SpanKind::WaitBarrier, taken, complete, 0, mine < 0 ? -1 : completedBy);
        spans.addRoot(SpanKind::WaitRead, complete, sent);
        spans.addRoot(SpanKind::WaitNetwork, sent, end);
        if (control == 0) {
            MpiMessage out;
            out.putSpans(spans.spans);
            putRankWork(out, computedSamples, updates, coreTime);
            out.put(messages); // how many it sent: the server takes those it has not taken yet
            mpi.send(out.bytes().data(), out.bytes().size(), 0, finalTag);
            for (auto& s : sends)
                mpi.complete(s.second);
            parameters.cancel();
            return;
        }
        reader.getFloats(params.data(), params.size());
        parameters.post(0);

        // Its slice of global batch `update`.
        while (cursorAt < update) {
            part.cursor.next(settings.batch);
            ++cursorAt;
        }
        const std::uint32_t* indices = part.cursor.next(settings.batch);
        ++cursorAt;
        const double computeStart = MpiContext::now();
        const int samples = part.compute(params.data(), indices);
        computedSamples += samples;
        ++updates;
        const double computed = MpiContext::now();
        spans.add(SpanKind::Compute, computeStart, computed, samples);
        const double delay = samples > 0 ? stragglers.delaySeconds(worker, update, computed - computeStart) : 0.0;
        if (delay > 0) {
            const double delayStart = MpiContext::now();
            sleepForStraggler(delay, never, [&] {
                arrivedEarly = arrivedEarly || mpi.testAny(parameters) >= 0;
                return arrivedEarly;
            });
            spans.add(SpanKind::Delay, delayStart, MpiContext::now());
        }
        // Sending, from here (MPI's progress, which the test below makes, moves messages in and out).
        const double sendStart = MpiContext::now();
        if (!arrivedEarly)
            arrivedEarly = mpi.testAny(parameters) >= 0; // the update finished while this one computed
        MpiMessage out;
        out.put(arrivedEarly ? noteKind : gradientKind);
        out.put(update);
        out.put(mpi.toRoot(sendStart));
        out.putSpans(spans.spans);
        spans.spans.clear();
        if (!arrivedEarly)
            part.put(out);
        sends.emplace_back(std::move(out), MpiContext::PendingSend {});
        const MpiBytes& bytes = sends.back().first.bytes();
        sends.back().second = mpi.startSend(bytes.data(), bytes.size(), 0, messageTag);
        ++messages;
        spans.add(SpanKind::Communicate, sendStart, MpiContext::now());
    }
}

} // namespace sgdscope
