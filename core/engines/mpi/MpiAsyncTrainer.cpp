#include "core/engines/mpi/MpiAsyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/RankReport.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/train/ChunkGradients.h"
#include "core/train/DatasetView.h"
#include "core/train/UpdateRule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <unistd.h>

namespace sgdscope {

namespace {
constexpr int answerTag = 20;
constexpr int pushTag = 21;
constexpr int finalTag = 22;
constexpr std::int64_t stopControl = 0;
constexpr std::int64_t pushControl = 1;
constexpr std::int64_t pauseControl = 2;
constexpr std::int64_t maxPushesPerSlice = 65536;
/// An answer's header: control, version, samples, when sent, since when ssp held it, who released it.
constexpr std::size_t answerHeaderBytes = 2 * sizeof(std::int64_t) + 2 * sizeof(std::int32_t) + 2 * sizeof(double);
} // namespace

MpiAsyncTrainer::MpiAsyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : MpiRootTrainer(std::move(problem), std::move(settings), mode)
    , m_gradient(m_params.size(), 0.0f)
    , m_compensation(compensationLambda(), m_settings.dcAdaptive, m_params.size())
{
    if (mode != Mode::Async && mode != Mode::Ssp && mode != Mode::DcAsgd)
        throw SgdError(std::string("MpiAsyncTrainer: ") + modeName(mode) + " is not an async-like mode");
    settingsChanged();
    m_velocity.assign(static_cast<std::size_t>(m_workers), ParamVector(m_params.size(), 0.0f));
    m_pushes.assign(static_cast<std::size_t>(m_workers), 0);
    m_clockLead.assign(static_cast<std::size_t>(m_workers), -1);
    m_boundWait.assign(static_cast<std::size_t>(m_workers), -1.0);
    m_heldAt.assign(static_cast<std::size_t>(m_workers), -1.0);
    if (mode == Mode::DcAsgd) // kept at every lambda, so that a lambda set live applies to the pushes in flight too
        m_sent.assign(static_cast<std::size_t>(m_workers), ParamVector(m_params.size(), 0.0f));
    m_gradients.tag = pushTag;
    for (int w = 0; w < m_workers; ++w) {
        m_gradients.from.push_back(w + 1);
        m_gradients.buffers.emplace_back(1024 * 1024 + m_params.size() * sizeof(float));
    }
    m_cutter.setWorkers(m_workers);
    m_gradients.arm();
}

MpiAsyncTrainer::~MpiAsyncTrainer() = default;

void MpiAsyncTrainer::settingsChanged()
{
    requireProcesses();
    m_workers = m_settings.workers;
    m_compensation.setLambda(compensationLambda()); // the server's, from the next push it applies
    m_sliceSize.clear();
    for (int w = 0; w < m_workers; ++w)
        m_sliceSize.push_back(balancedPart(m_settings.batch, m_workers, w).size());
}

bool MpiAsyncTrainer::answer(int w, bool push, int releasedBy)
{
    const auto me = static_cast<std::size_t>(w);
    const std::int64_t budgetLeft = m_settings.sampleBudget - m_claimedSamples;
    const int count = push && m_pushesLeft > 0 && budgetLeft > 0
        ? static_cast<int>(std::min<std::int64_t>(m_sliceSize[me], budgetLeft))
        : 0;
    if (count > 0 && !m_ssp.mayStart(w)) {
        // Too far ahead of the slowest: it may start this push when the slowest has caught up.
        m_ssp.hold(w);
        m_heldAt[me] = MpiContext::now();
        return false;
    }
    MpiMessage out;
    out.reserve(answerHeaderBytes + (count > 0 ? m_params.size() * sizeof(float) : 0));
    out.put(count > 0 ? pushControl : pauseControl);
    out.put(m_updates); // the version of these parameters
    out.put(static_cast<std::int32_t>(count));
    out.put(MpiContext::now());
    out.put(m_heldAt[me]);
    out.put(static_cast<std::int32_t>(releasedBy == w ? -1 : releasedBy));
    const double heldAt = m_heldAt[me];
    m_heldAt[me] = -1.0;
    if (count > 0) {
        out.putFloats(m_params.data(), m_params.size());
        m_claimedSamples += count;
        --m_pushesLeft;
        m_clockLead[me] = m_ssp.lead(w);
        if (mode() == Mode::Ssp)
            m_boundWait[me] = heldAt >= 0 ? MpiContext::now() - heldAt : 0.0;
        if (mode() == Mode::DcAsgd)
            std::copy(m_params.begin(), m_params.end(), m_sent[me].begin());
    }
    m_mpi.send(out.bytes().data(), out.bytes().size(), w + 1, answerTag);
    if (count == 0 && m_ssp.takingPart(w)) {
        // It leaves the slice: the others no longer wait for it.
        m_ssp.leave(w);
        releaseHeld(w, push);
    }
    return count > 0;
}

void MpiAsyncTrainer::releaseHeld(int by, bool push)
{
    for (int w = m_ssp.nextReleased(); w >= 0; w = m_ssp.nextReleased())
        m_active += answer(w, push, by) ? 1 : 0;
}

void MpiAsyncTrainer::trainSome(const RunLimits& limits, double sliceStartSeconds, TrainingObserver& observer)
{
    const double sliceStart = MpiContext::now();
    m_sliceOpen = true;
    m_sliceStart = sliceStart;
    m_sliceEvents.clear();
    // A time-limited run (a progress stream) ends the slice at its time: no new pushes after it.
    const double deadline = std::isfinite(limits.maxSeconds)
        ? sliceStart + std::max(0.0, limits.maxSeconds - (m_seconds - sliceStartSeconds))
        : std::numeric_limits<double>::infinity();
    const double shift = m_seconds - sliceStart;
    m_sliceShift = shift;
    // Pushes of this slice: up to the next whole-set evaluation (the server pauses everyone for it).
    const std::int64_t perPush = std::max(1, m_settings.batch / std::max(1, m_workers));
    m_pushesLeft = pushesWithinLimits(limits, maxPushesPerSlice);
    if (m_nextEvalSamples != std::numeric_limits<std::int64_t>::max())
        m_pushesLeft = std::min(m_pushesLeft, stepsToReach(m_samples, m_nextEvalSamples, perPush));

    // ssp: the workers taking part in the slice, at their clocks (the others are never held).
    m_ssp.reset(mode() == Mode::Ssp ? m_settings.sspBound : std::numeric_limits<std::int64_t>::max(), m_workers);
    if (mode() == Mode::Ssp) {
        for (int w = 0; w < m_workers; ++w) {
            if (m_sliceSize[static_cast<std::size_t>(w)] > 0)
                m_ssp.join(w, m_pushes[static_cast<std::size_t>(w)]);
        }
    }
    m_active = 0;
    for (int w = 0; w < m_workers; ++w)
        m_active += answer(w, true) ? 1 : 0;
    const PushRule rule(m_settings, m_compensation);
    while (m_active > 0) {
        const int w = m_mpi.receiveAny(m_gradients);
        MpiMessageReader in(
            m_gradients.buffers[static_cast<std::size_t>(w)].data(), m_gradients.sizes[static_cast<std::size_t>(w)]);
        const auto versionRead = in.get<std::int64_t>();
        const auto count = in.get<std::int32_t>();
        const auto loss = in.get<double>();
        const auto sentAt = in.get<double>();
        for (const Span& s : in.getSpans())
            m_cutter.add(s);
        m_cutter.knownUntil(w, sentAt);
        in.getFloats(m_gradient.data(), m_gradient.size());
        m_gradients.post(w); // its next push (owed once it is answered)

        UpdateEvent event;
        event.worker = w;
        event.versionRead = versionRead;
        event.versionApplied = m_updates;
        event.samples = count;
        event.batchLoss = loss;
        event.applied = std::isfinite(loss);
        event.clockLead = m_clockLead[static_cast<std::size_t>(w)];
        event.boundWait = m_boundWait[static_cast<std::size_t>(w)];
        // Room first: applied, the push is counted and in the slice (what allocates after it, the gate's next
        // clock, comes once it is there).
        if (m_sliceEvents.size() == m_sliceEvents.capacity())
            m_sliceEvents.reserve(std::max<std::size_t>(64, 2 * m_sliceEvents.capacity()));
        if (event.applied) {
            const float* read = m_sent.empty() ? nullptr : m_sent[static_cast<std::size_t>(w)].data(); // dc-asgd's
            const AppliedPush applied
                = rule.apply(m_params.data(), m_gradient.data(), m_velocity[static_cast<std::size_t>(w)].data(), read,
                    m_params.size(), m_updates - versionRead, count, m_samples);
            event.compensation = applied.compensation;
            event.learningRate = applied.learningRate;
            ++m_pushes[static_cast<std::size_t>(w)];
        }
        countPush(event);
        event.seconds = MpiContext::now() + shift;
        m_sliceEvents.push_back(event);
        if (event.applied)
            m_ssp.advance(w); // ssp: its clock moves on, the slowest may have caught up
        const bool more = !diverged() && !stopRequestedNow() && !(target().reached && m_settings.stopAtTarget)
            && MpiContext::now() < deadline;
        if (!answer(w, more))
            --m_active;
        releaseHeld(w, more);
    }
    closeOpenWindow();
    reportCut(m_cutter, observer, false);
}

void MpiAsyncTrainer::closeOpenWindow()
{
    if (!m_sliceOpen)
        return;
    m_cutter.makeRoom(); // if this fails, the slice stays open for reportUntilFailure to close
    m_sliceOpen = false;
    const double sliceEnd = MpiContext::now();
    m_seconds += sliceEnd - m_sliceStart;
    m_cutter.close({WorkWindow {m_sliceStart, sliceEnd, m_workers}, m_sliceShift, std::move(m_sliceEvents)});
    m_sliceEvents.clear();
}

void MpiAsyncTrainer::endOfRun(TrainingObserver& observer)
{
    m_gradients.cancel();
    MpiMessage stop;
    stop.reserve(answerHeaderBytes);
    stop.put(stopControl);
    stop.put(m_updates);
    stop.put(std::int32_t {0});
    stop.put(MpiContext::now());
    stop.put(-1.0);
    stop.put(std::int32_t {-1});
    // Rank 0 is the server: it computes no gradient.
    std::vector<RankWork> work {rankWork(0, 0, 0, m_coreTime)};
    for (int w = 0; w < m_workers; ++w) {
        m_mpi.send(stop.bytes().data(), stop.bytes().size(), w + 1, answerTag);
        const std::vector<char> final = m_mpi.receiveWhole(w + 1, finalTag);
        MpiMessageReader in(final.data(), final.size());
        for (const Span& s : in.getSpans())
            m_cutter.add(s);
        work.push_back(takeRankWork(in, w + 1));
    }
    m_mpi.recordWork(mode(), std::move(work));
    reportCut(m_cutter, observer, true);
}

void serveMpiAsync(std::shared_ptr<const Problem> problem, const TrainerSettings& settings)
{
    MpiContext& mpi = MpiContext::get();
    const CoreTimeSince coreTime;
    const int worker = mpi.rank() - 1;
    const DataOrder order(problem->train().size(), settings.seed);
    BatchCursor cursor(order);
    const SampleView<float> view = viewOf(problem->train());
    const IndexRange slice = balancedPart(settings.batch, settings.workers, worker);
    const int chunk = chunkSizeFor(settings.chunk, settings.batch);
    const int passSamples = passSamplesFor(problem->spec);
    NetworkWorkspace workspace(problem->spec, std::min(passSamples, settings.batch));
    ParamVector params(problem->layout.paddedSize(), 0.0f);
    std::vector<char> receive(64 + params.size() * sizeof(float));
    StragglerModel stragglers(settings);
    stragglers.prepare();
    const std::atomic<bool> never {false};
    RankSpans spans {mpi, worker, {}};
    SliceReduction reduction;
    std::int64_t pushes = 0;
    std::int64_t computedSamples = 0;
    bool paused = false;
    MpiMessage out;
    // A push goes out while this worker waits for its answer: a large message completes only when the
    // server takes it, so the time until then is waiting for the server (its queue, its applies), not
    // communication.
    MpiContext::PendingSend push;
    while (true) {
        const double waitStart = MpiContext::now();
        const std::size_t size = mpi.receive(receive.data(), receive.size(), 0, answerTag);
        const double arrived = MpiContext::now();
        mpi.complete(push); // the server answers a push only once it has it
        MpiMessageReader in(receive.data(), size);
        const auto control = in.get<std::int64_t>();
        const auto version = in.get<std::int64_t>();
        const auto count = in.get<std::int32_t>();
        const double sentAt = in.get<double>();
        const double heldAt = in.get<double>();
        const auto releasedBy = in.get<std::int32_t>();
        // Waiting for the server (its queue, its applies), ssp: for the slowest worker from the moment the bound
        // held this one back to the push that released it, then for the parameters on the wire; after a pause,
        // waiting for the slice to end (everybody) and the next to begin.
        const double start = mpi.toRoot(waitStart);
        const double end = mpi.toRoot(arrived);
        const double sent = std::clamp(sentAt, start, end);
        const SpanKind peerWait = paused ? SpanKind::WaitSlice : SpanKind::WaitRead;
        const double held = heldAt < 0 ? sent : std::clamp(heldAt, start, sent);
        spans.addRoot(peerWait, start, held);
        spans.addRoot(SpanKind::WaitBarrier, held, sent, 0, releasedBy);
        spans.addRoot(paused ? SpanKind::WaitSlice : SpanKind::WaitNetwork, sent, end);
        if (control == stopControl) {
            out.clear();
            out.putSpans(spans.spans);
            putRankWork(out, computedSamples, pushes, coreTime);
            mpi.send(out.bytes().data(), out.bytes().size(), 0, finalTag);
            return;
        }
        paused = control == pauseControl;
        if (paused)
            continue;
        in.getFloats(params.data(), params.size());
        // Worker w's n-th push: slice w of global batch n (the run's last push may be cut short).
        const std::uint32_t* batch = cursor.next(settings.batch);
        reduction.prepare(count, chunk, settings.accum, passSamples);
        reduction.ensureBuffers(params.size());
        const double computeStart = MpiContext::now();
        const double loss = reduction.compute(workspace, problem->layout, params.data(), view, batch + slice.begin);
        computedSamples += count;
        const double computed = MpiContext::now();
        spans.add(SpanKind::Compute, computeStart, computed, count);
        const double delay = stragglers.delaySeconds(worker, pushes, computed - computeStart);
        if (delay > 0) {
            const double delayStart = MpiContext::now();
            sleepForStraggler(delay, never);
            spans.add(SpanKind::Delay, delayStart, MpiContext::now());
        }
        ++pushes;
        const double sendStart = MpiContext::now();
        out.clear();
        out.put(version);
        out.put(count);
        out.put(loss / count);
        out.put(mpi.toRoot(sendStart));
        out.putSpans(spans.spans);
        spans.spans.clear();
        out.putFloats(reduction.gradient(), params.size());
        push = mpi.startSend(out.bytes().data(), out.bytes().size(), 0, pushTag);
        spans.add(SpanKind::Communicate, sendStart, MpiContext::now());
    }
}

} // namespace sgdscope
