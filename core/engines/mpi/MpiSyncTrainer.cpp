#include "core/engines/mpi/MpiSyncTrainer.h"

#include "core/common/Error.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/MpiMessage.h"
#include "core/engines/mpi/RankReport.h"
#include "core/engines/threads/StragglerSleep.h"
#include "core/train/BinomialTree.h"
#include "core/train/ChunkGradients.h"
#include "core/train/DatasetView.h"
#include "core/train/UpdateRule.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <set>

#include <unistd.h>

namespace sgdscope {

namespace {
constexpr int gradientTag = 11;
constexpr int finalTag = 12;
constexpr int parametersTag = 13;
constexpr int goTag = 16; // the all-reduce's "go"

/// The all-reduce's "go" or "stop" (rank 0 to every rank, down the tree): control, update, batch, whether the
/// parameters follow, the update's learning rate, when rank 0 sent it (its clock), the parameters if they follow.
std::size_t goMessageBytes(std::size_t floats)
{
    return 2 * sizeof(std::int64_t) + 2 * sizeof(std::int32_t) + sizeof(float) + sizeof(double)
        + floats * sizeof(float);
}

/// The parameters go down the binomial tree (BinomialTree.h; so that rank 0 does not send them N - 1 times), each
/// rank sending to its children the largest subtree first.
///
/// Point-to-point messages, not MPI_Ibcast: Open MPI 4.1's broadcast of 1 MB moves in pieces that each need both
/// ranks inside MPI, and completes on rank 0 only when the others next call MPI, which they do after their compute
/// (measured here with 2 processes: rank 0's broadcast lasted a median 1.15 ms, as long as rank 1's compute, so
/// that the two computed one after the other). A large point-to-point message is read by its receiver alone
/// (shared memory's single copy), so rank 0 starts its sends, computes its part meanwhile, and completes them once
/// the gradients are in.
std::vector<int> largestSubtreeFirst(std::vector<int> children)
{
    std::reverse(children.begin(), children.end());
    return children;
}

/// The size of every broadcast of parameters (all ranks send and take the same): control, update, the
/// local steps taken so far, batch, this round's local steps (sync: 1), when rank 0 began to take the gradients of the
/// previous update (its own part done), when it had them all, when it sent these, when each rank's gradient arrived
/// (rank 0's clock), the parameters.
std::size_t parametersMessageBytes(int ranks, std::size_t floats)
{
    return 3 * sizeof(std::int64_t) + 2 * sizeof(std::int32_t) + (3 + static_cast<std::size_t>(ranks)) * sizeof(double)
        + floats * sizeof(float);
}

/// A wait for the parameters, after this rank sent its gradient (rank 0's clock for the times given): for rank 0
/// to finish its own part (`takingRoot`: rank 0 is a worker too, and a slower one is a barrier), for its gradient
/// to reach rank 0 (network) until rank 0 had it (`mineRoot`), for the slowest worker until rank 0 had every
/// gradient (`allRoot`), for rank 0 itself (its combine, apply and any evaluation: a read from a server) until it
/// sent them (`sentRoot`), for the parameters on the wire after. `last`: the rank whose gradient reached rank 0
/// last (the one the wait for the slowest was for), `rootWorker` rank 0's worker (-1: a server, computing nothing).
void addParameterWait(RankSpans& spans, double localStart, double localEnd, double takingRoot, double mineRoot,
    double allRoot, double sentRoot, int last, int rootWorker)
{
    const double start = spans.mpi.toRoot(localStart);
    const double end = spans.mpi.toRoot(localEnd);
    const double mine = std::clamp(mineRoot, start, end);
    const double taking = std::clamp(takingRoot, start, mine);
    const double all = std::clamp(allRoot, mine, end);
    const double sent = std::clamp(sentRoot, all, end);
    if (rootWorker >= 0) // (a server has no part of its own)
        spans.addRoot(SpanKind::WaitBarrier, start, taking, 0, rootWorker);
    spans.addRoot(SpanKind::WaitNetwork, taking, mine);
    spans.addRoot(SpanKind::WaitBarrier, mine, all, 0, last);
    spans.addRoot(SpanKind::WaitRead, all, sent);
    spans.addRoot(SpanKind::WaitNetwork, sent, end);
}

/// Local SGD on --topology ps: rank 0 is the server (it averages, computes nothing), ranks 1..N-1 are workers 0..N-2.
/// Otherwise rank r is worker r.
bool onServer(Mode mode, const TrainerSettings& settings)
{
    return mode == Mode::LocalSgd && settings.topology == Topology::ParameterServer;
}

/// Where the parameters go from `rank`: down the tree, or from the server straight to every worker.
std::vector<int> parameterTargets(int rank, int ranks, bool server)
{
    if (!server)
        return largestSubtreeFirst(binomialChildren(rank, ranks));
    std::vector<int> workers;
    for (int r = 1; rank == 0 && r < ranks; ++r)
        workers.push_back(r);
    return workers;
}

/// The rank whose gradient of an update reached rank 0 last (the lowest of those arriving together; 0 if none).
int lastArrival(const std::vector<double>& arrivals)
{
    int last = 0;
    for (std::size_t r = 1; r < arrivals.size(); ++r) {
        if (last == 0 || arrivals[r] > arrivals[static_cast<std::size_t>(last)])
            last = static_cast<int>(r);
    }
    return last;
}

/// Worker `worker`'s part of update `update`, timed on this rank's clock: `compute()` (returning its samples) as a
/// Compute span, then its straggler's delay (a part with samples only) as a Delay span. Returns its samples.
template<class Compute>
int computeAndDelay(Compute&& compute, const StragglerModel& stragglers, int worker, std::int64_t update,
    const std::atomic<bool>& stop, RankSpans& spans)
{
    const double computeStart = MpiContext::now();
    const int samples = compute();
    const double computed = MpiContext::now();
    spans.add(SpanKind::Compute, computeStart, computed, samples);
    const double delay = samples > 0 ? stragglers.delaySeconds(worker, update, computed - computeStart) : 0.0;
    if (delay > 0) {
        const double delayStart = MpiContext::now();
        sleepForStraggler(delay, stop);
        spans.add(SpanKind::Delay, delayStart, MpiContext::now());
    }
    return samples;
}

/// A rank's local steps on its clock (LocalSgdModels::localSteps): each step's compute, its straggler delay (its
/// factor drawn for its global step) and its apply, as spans.
class RankTimedSteps final : public LocalStepHooks
{
public:
    RankTimedSteps(RankSpans& spans, int worker, const StragglerModel& stragglers, std::int64_t globalStep,
        const std::atomic<bool>& stop)
        : m_spans(spans)
        , m_worker(worker)
        , m_stragglers(stragglers)
        , m_globalStep(globalStep)
        , m_stop(stop)
    {
    }
    void computing(int) override { m_start = MpiContext::now(); }
    void computed(int step, int samples) override
    {
        const double computed = MpiContext::now();
        m_spans.add(SpanKind::Compute, m_start, computed, samples);
        const double delay = m_stragglers.delaySeconds(m_worker, m_globalStep + step, computed - m_start);
        if (delay > 0) {
            const double delayStart = MpiContext::now();
            sleepForStraggler(delay, m_stop);
            m_spans.add(SpanKind::Delay, delayStart, MpiContext::now());
        }
    }
    void applying(int) override { m_start = MpiContext::now(); }
    void applied(int) override { m_spans.add(SpanKind::Apply, m_start, MpiContext::now()); }

private:
    RankSpans& m_spans;
    int m_worker;
    const StragglerModel& m_stragglers;
    std::int64_t m_globalStep;
    const std::atomic<bool>& m_stop;
    double m_start = 0.0;
};

/// Local SGD's round on one rank: `steps` local steps of worker w's model on its slices of the round's batches (every
/// rank takes the same batches from its copy of the data), timed.
RoundLoss localRound(LocalSgdModels& models, int worker, int steps, BatchCursor& cursor, int batch,
    NetworkWorkspace& workspace, const Problem& problem, const SampleView<float>& view,
    const StragglerModel& stragglers, std::int64_t globalStep, const MomentumSgd& rule, const LearningRateRule& rate,
    const std::atomic<bool>& stop, RankSpans& spans)
{
    models.startRound(cursor, steps, batch);
    RankTimedSteps timed(spans, worker, stragglers, globalStep, stop);
    // The round starts after globalStep steps of a batch each: the same count on every rank.
    return models.localSteps(worker, workspace, problem.layout, view, rule, rate, globalStep * batch, timed);
}
} // namespace

MpiSyncTrainer::MpiSyncTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode)
    : MpiRootTrainer(std::move(problem), std::move(settings), mode)
    , m_cursor(m_order)
    , m_velocity(m_params.size(), 0.0f)
    , m_arrivals(static_cast<std::size_t>(m_mpi.size()), 0.0)
{
    if (mode != Mode::Sync && mode != Mode::LocalSgd)
        throw SgdError(std::string("MpiSyncTrainer: ") + modeName(mode) + " is not sync or local-sgd");
    m_cutter.setWorkers(m_settings.workers);
    settingsChanged();
}

MpiSyncTrainer::~MpiSyncTrainer() = default;

void MpiSyncTrainer::settingsChanged()
{
    requireProcesses();
    preparePlan();
    m_ranksHaveParameters = false;
}

void MpiSyncTrainer::preparePlan()
{
    if (mode() == Mode::LocalSgd) {
        // (on a server, the one worker computed here is none)
        m_local.prepare(m_settings.workers, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum,
            passSamples(), m_params, served() ? m_settings.workers : 0);
    } else {
        m_reduction.prepare(m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.workers, m_settings.accum,
            passSamples(), m_params.size());
    }
    workspace(0);
}

void MpiSyncTrainer::trainSome(const RunLimits&, double, TrainingObserver& observer)
{
    if (allReduced())
        return trainAllReduced(observer);
    const double windowStart = MpiContext::now();
    const double shift = m_seconds - windowStart; // rank 0's steady clock -> the mode's clock
    RankSpans mine {m_mpi, 0, {}};

    const bool local = mode() == Mode::LocalSgd;
    // local-sgd: the round's local steps, H or what is left of the sample budget.
    m_roundSteps = local ? nextLocalRoundSteps() : 1;
    const std::size_t floats = m_params.size();
    std::size_t largest = 1024;
    for (int r = 1; r < m_mpi.size(); ++r)
        largest = std::max(largest,
            local ? 64 * 1024 + 3 * static_cast<std::size_t>(m_roundSteps) * sizeof(Span) + floats * sizeof(float)
                  : 64 * 1024 + mpiOutgoingBuffers(m_reduction.plan, r).size() * floats * sizeof(float)
                    + static_cast<std::size_t>(m_reduction.chunks.chunkCount) * sizeof(double));
    // A receive posted for every rank at once, before anything else, so that no rank's send waits for rank 0
    // or for another rank (a rank blocked in a send would count a wait for the slowest worker as
    // communication).
    if (m_gradients.from.empty()) {
        m_gradients.tag = gradientTag;
        for (int r = 1; r < m_mpi.size(); ++r)
            m_gradients.from.push_back(r);
        m_gradients.buffers.assign(m_gradients.from.size(), {});
    }
    for (auto& buffer : m_gradients.buffers)
        buffer.resize(largest);
    m_gradients.armed = false;
    m_gradients.arm();

    // The parameters (and "go") to every rank, down the tree; rank 0 computes its part while they go.
    broadcastParameters(true);
    mine.add(SpanKind::Communicate, windowStart, MpiContext::now());

    // Rank 0's own part: worker 0's chunks (local-sgd: its round of local steps).
    const MomentumSgd rule(m_settings.momentum);
    const LearningRateRule rate(m_settings);
    RoundLoss localLoss; // local-sgd: every rank's samples' losses, in rank order
    if (local && !served()) {
        localLoss = localRound(m_local, 0, m_roundSteps, m_cursor, m_settings.batch, workspaceAt(0), *m_problem, m_view,
            m_stragglers, m_globalStep, rule, rate, m_stopFlag, mine);
        m_computedSamples += localLoss.samples;
    } else if (!local) {
        computeOwnPart(mine);
    }

    // Every other rank's part: the roots of its subtrees, its chunks' losses and its spans. Silence counts
    // from here (rank 0's own computing and delay are not the others' fault).
    const double waitStart = MpiContext::now();
    m_takingGradientsAt = waitStart;
    double lastSent = waitStart;
    for (std::size_t k = 0; k < m_gradients.from.size(); ++k) {
        const int arrived = m_mpi.receiveAny(m_gradients);
        m_arrivals[static_cast<std::size_t>(arrived) + 1] = MpiContext::now();
    }
    for (int r = 1; r < m_mpi.size(); ++r) {
        const auto k = static_cast<std::size_t>(r - 1);
        MpiMessageReader in(m_gradients.buffers[k].data(), m_gradients.sizes[k]);
        if (in.get<std::int64_t>() != m_updates)
            throw RunFailure("rank " + std::to_string(r) + " computed another update than rank 0");
        const double sentAt = in.get<double>(); // rank 0's clock
        lastSent = std::max(lastSent, sentAt);
        for (const Span& s : in.getSpans())
            m_cutter.add(s);
        const int worker = served() ? r - 1 : r;
        m_cutter.knownUntil(worker, sentAt);
        if (local) {
            RoundLoss rank;
            rank.sum = in.get<double>();
            rank.samples = in.get<std::int32_t>();
            localLoss.add(rank);
            in.getFloats(m_local.model(worker), floats);
            continue;
        }
        takeWorkerPart(in, m_reduction, r, floats);
    }
    m_allGradientsAt = MpiContext::now();
    mine.addWait(SpanKind::WaitBarrier, waitStart, m_allGradientsAt, lastSent, lastArrival(m_arrivals));
    // This update's parameters: every rank below has taken them (and sent its gradient since).
    completeBroadcast();
    mine.add(SpanKind::Communicate, m_allGradientsAt, MpiContext::now());

    // The fixed tree's last additions and the update, in the same order as every engine (local-sgd: the average).
    double batchLoss = 0.0;
    double spread = -1.0;
    applyInItsWindow(
        windowStart, shift, m_settings.workers, served() ? nullptr : &mine,
        [&] {
            if (local) {
                if (!localLoss.diverged())
                    spread = m_local.averageAll(m_params.data());
            } else {
                batchLoss = m_reduction.applyKept(
                    {}, rule, rate.ofBatch(m_samples), m_params.data(), m_velocity.data(), floats);
            }
        },
        [&](double seconds) {
            m_globalStep += m_roundSteps;
            return local ? localRoundEvent(m_roundSteps, localLoss, spread, seconds)
                         : syncUpdateEvent(m_settings.batch, batchLoss, seconds);
        });
    reportCut(m_cutter, observer, false);
}

void MpiSyncTrainer::computeOwnPart(RankSpans& mine)
{
    const std::uint32_t* indices = m_cursor.next(m_settings.batch);
    m_computedSamples += computeAndDelay(
        [&] {
            return computeWorkerPart(workspaceAt(0), m_problem->layout, m_params.data(), m_view, indices,
                m_reduction.plan.workers.front(), static_cast<float>(1.0 / m_reduction.chunks.batch),
                m_reduction.buffers, m_reduction.chunkLoss.data());
        },
        m_stragglers, 0, m_updates, m_stopFlag, mine);
}

void MpiSyncTrainer::trainAllReduced(TrainingObserver& observer)
{
    const double windowStart = MpiContext::now();
    const double shift = m_seconds - windowStart; // rank 0's steady clock -> the mode's clock
    RankSpans mine {m_mpi, 0, {}};
    const std::size_t floats = m_params.size();
    if (!m_allReduce) {
        m_allReduce = std::make_unique<MpiAllReduce>(m_mpi, floats);
        m_next.assign(floats, 0.0f);
        m_nextVelocity.assign(floats, 0.0f);
    }
    const MomentumSgd rule(m_settings.momentum);
    const float lr = LearningRateRule(m_settings).ofBatch(m_samples);
    m_allReduce->post(m_reduction);
    sendGo(true, lr);
    mine.add(SpanKind::Communicate, windowStart, MpiContext::now());
    computeOwnPart(mine);

    const auto arrived = [this](int rank, const std::vector<Span>& spans, double sentAt) {
        for (const Span& s : spans)
            m_cutter.add(s);
        m_cutter.knownUntil(rank, sentAt);
    };
    m_allReduce->reduceScatter(m_reduction, m_updates, mine, arrived);
    const std::size_t begin = m_allReduce->first(0);
    const std::size_t end = m_allReduce->last(0);
    std::copy(m_params.begin() + static_cast<std::ptrdiff_t>(begin),
        m_params.begin() + static_cast<std::ptrdiff_t>(end), m_next.begin() + static_cast<std::ptrdiff_t>(begin));
    std::copy(m_velocity.begin() + static_cast<std::ptrdiff_t>(begin),
        m_velocity.begin() + static_cast<std::ptrdiff_t>(end),
        m_nextVelocity.begin() + static_cast<std::ptrdiff_t>(begin));
    const double applyStart = MpiContext::now();
    const double batchLoss = m_allReduce->applySegment(m_reduction, rule, lr, m_next.data(), m_nextVelocity.data());
    mine.add(SpanKind::Apply, applyStart, MpiContext::now());
    m_allReduce->allGather(m_next.data(), m_updates, mine, arrived);
    m_ranksHaveParameters = true;

    // Every segment is in: the update takes effect on rank 0.
    applyInItsWindow(
        windowStart, shift, m_settings.workers, &mine,
        [&] {
            std::copy(m_next.begin(), m_next.end(), m_params.begin());
            std::copy(m_nextVelocity.begin() + static_cast<std::ptrdiff_t>(begin),
                m_nextVelocity.begin() + static_cast<std::ptrdiff_t>(end),
                m_velocity.begin() + static_cast<std::ptrdiff_t>(begin));
        },
        [&](double seconds) {
            m_globalStep += 1;
            return syncUpdateEvent(m_settings.batch, batchLoss, seconds);
        });
    reportCut(m_cutter, observer, false);
}

void MpiSyncTrainer::completeBroadcast()
{
    for (MpiContext::PendingSend& send : m_broadcast)
        m_mpi.complete(send);
    m_broadcast.clear();
}

void MpiSyncTrainer::sendGo(bool go, float lr)
{
    completeBroadcast(); // the last one's (done unless a run ended in between)
    const bool withParameters = go && !m_ranksHaveParameters;
    m_go.clear();
    m_go.put(std::int64_t {go ? 1 : 0});
    m_go.put(m_updates);
    m_go.put(static_cast<std::int32_t>(m_settings.batch));
    m_go.put(static_cast<std::int32_t>(withParameters ? 1 : 0));
    m_go.put(lr);
    m_go.put(m_mpi.toRoot(MpiContext::now()));
    if (withParameters)
        m_go.putFloats(m_params.data(), m_params.size());
    for (const int child : largestSubtreeFirst(binomialChildren(0, m_mpi.size())))
        m_broadcast.push_back(m_mpi.startSend(m_go.data(), m_go.bytes().size(), child, goTag));
    if (!go) // the last: every rank answers it with its final spans
        completeBroadcast();
}

void MpiSyncTrainer::broadcastParameters(bool go)
{
    completeBroadcast(); // the last one's (done unless a run ended in between)
    m_go.clear();
    m_go.put(std::int64_t {go ? 1 : 0});
    m_go.put(m_updates);
    m_go.put(m_globalStep);
    m_go.put(static_cast<std::int32_t>(m_settings.batch));
    m_go.put(static_cast<std::int32_t>(m_roundSteps));
    m_go.put(m_takingGradientsAt);
    m_go.put(m_allGradientsAt);
    m_go.put(m_mpi.toRoot(MpiContext::now()));
    for (const double at : m_arrivals)
        m_go.put(at);
    m_go.putFloats(m_params.data(), m_params.size());
    assert(m_go.bytes().size() == parametersMessageBytes(m_mpi.size(), m_params.size()));
    for (const int child : parameterTargets(0, m_mpi.size(), served()))
        m_broadcast.push_back(m_mpi.startSend(m_go.data(), m_go.bytes().size(), child, parametersTag));
    if (!go) // the last: every rank answers it with its final spans
        completeBroadcast();
}

void MpiSyncTrainer::endOfRun(TrainingObserver& observer)
{
    // "Stop" to every rank; each answers with the spans it still had (its wait for this message).
    if (allReduced())
        sendGo(false, 0.0f);
    else
        broadcastParameters(false);
    std::vector<RankWork> work {rankWork(0, m_computedSamples, m_updates, m_coreTime)};
    for (int r = 1; r < m_mpi.size(); ++r) {
        const std::vector<char> final = m_mpi.receiveWhole(r, finalTag);
        MpiMessageReader in(final.data(), final.size());
        for (const Span& s : in.getSpans())
            m_cutter.add(s);
        work.push_back(takeRankWork(in, r));
    }
    m_mpi.recordWork(mode(), std::move(work));
    reportCut(m_cutter, observer, true);
}

namespace {
/// Rank r > 0's side of sync on the all-reduce (MpiSyncTrainer::trainAllReduced): for every "go", its part, the
/// reduce-scatter, its segment's update and the all-gather, until "stop".
void serveMpiAllReduce(const Problem& problem, const TrainerSettings& settings)
{
    MpiContext& mpi = MpiContext::get();
    const CoreTimeSince coreTime;
    const int rank = mpi.rank();
    MpiWorkerPart part(problem, settings, rank);
    const std::size_t floats = problem.layout.paddedSize();
    ParamVector params(floats, 0.0f);
    ParamVector velocity(floats, 0.0f);
    MpiAllReduce exchange(mpi, floats);
    const MomentumSgd rule(settings.momentum);
    MpiMessage received(goMessageBytes(floats)); // and forwarded down the tree as it is
    std::int64_t computedSamples = 0;
    std::int64_t updates = 0;
    StragglerModel stragglers(settings);
    stragglers.prepare();
    const std::atomic<bool> never {false};
    RankSpans spans {mpi, rank, {}};
    const std::vector<int> children = largestSubtreeFirst(binomialChildren(rank, mpi.size()));
    std::vector<MpiContext::PendingSend> forwards;
    while (true) {
        const double waitStart = MpiContext::now();
        for (MpiContext::PendingSend& f : forwards)
            mpi.complete(f);
        forwards.clear();
        const std::size_t size = mpi.receive(received.data(), received.bytes().size(), binomialParent(rank), goTag);
        for (const int child : children)
            forwards.push_back(mpi.startSend(received.data(), size, child, goTag));
        MpiMessageReader in(received.data(), size);
        const auto control = in.get<std::int64_t>();
        const auto update = in.get<std::int64_t>();
        const auto batch = in.get<std::int32_t>();
        const auto withParameters = in.get<std::int32_t>();
        const auto lr = in.get<float>();
        const auto sentAt = in.get<double>();
        if (withParameters != 0)
            in.getFloats(params.data(), floats);
        // Until rank 0 sent it: rank 0 counted, reported and perhaps evaluated the last update (a read from a server).
        spans.addWait(SpanKind::WaitRead, waitStart, MpiContext::now(), sentAt, -1);
        if (control == 0) {
            for (MpiContext::PendingSend& f : forwards)
                mpi.complete(f);
            MpiMessage out;
            out.putSpans(spans.spans);
            putRankWork(out, computedSamples, updates, coreTime);
            mpi.send(out.bytes().data(), out.bytes().size(), 0, finalTag);
            return;
        }
        if (batch != settings.batch)
            throw RunFailure("rank 0 asked for a batch of " + std::to_string(batch) + ", this rank planned for "
                + std::to_string(settings.batch));
        exchange.post(part.reduction);
        const std::uint32_t* indices = part.cursor.next(settings.batch);
        computedSamples += computeAndDelay(
            [&] { return part.compute(params.data(), indices); }, stragglers, rank, update, never, spans);
        ++updates;
        exchange.reduceScatter(part.reduction, update, spans, {});
        const double applyStart = MpiContext::now();
        exchange.applySegment(part.reduction, rule, lr, params.data(), velocity.data());
        spans.add(SpanKind::Apply, applyStart, MpiContext::now());
        exchange.allGather(params.data(), update, spans, {});
    }
}
} // namespace

void serveMpiSync(std::shared_ptr<const Problem> problem, const TrainerSettings& settings, Mode mode)
{
    if (mode == Mode::Sync && settings.topology == Topology::AllReduce)
        return serveMpiAllReduce(*problem, settings);
    const bool local = mode == Mode::LocalSgd;
    const bool server = onServer(mode, settings);
    MpiContext& mpi = MpiContext::get();
    const CoreTimeSince coreTime;
    const int rank = mpi.rank();
    const int worker = server ? rank - 1 : rank;
    MpiWorkerPart part(*problem, settings, worker);
    ParamVector params(problem->layout.paddedSize(), 0.0f);
    LocalSgdModels models;
    if (local)
        models.prepare(settings.workers, settings.batch, part.reduction.chunks.chunkSize, settings.accum,
            part.passSamples, params, worker);
    const MomentumSgd rule(settings.momentum);
    MpiMessage received(parametersMessageBytes(mpi.size(), params.size())); // and forwarded down the tree as it is
    std::int64_t computedSamples = 0;
    std::int64_t updates = 0;
    StragglerModel stragglers(settings);
    stragglers.prepare();
    const std::atomic<bool> never {false};
    RankSpans spans {mpi, worker, {}};
    MpiMessage out;
    // The gradient goes out while this rank waits for the next parameters: a large message completes only
    // when rank 0 takes it, and the time until then is waiting for rank 0, not communication.
    MpiContext::PendingSend gradient;
    const std::vector<int> children = parameterTargets(rank, mpi.size(), server);
    std::vector<MpiContext::PendingSend> forwards; // the parameters passed on down the tree
    while (true) {
        const double waitStart = MpiContext::now();
        for (MpiContext::PendingSend& f : forwards) // taken long ago: the buffer is needed again
            mpi.complete(f);
        forwards.clear();
        mpi.receive(received.data(), received.bytes().size(), server ? 0 : binomialParent(rank), parametersTag);
        for (const int child : children)
            forwards.push_back(mpi.startSend(received.data(), received.bytes().size(), child, parametersTag));
        const double arrived = MpiContext::now();
        mpi.complete(gradient); // rank 0 had it before it sent these parameters
        MpiMessageReader in(received.data(), received.bytes().size());
        const auto control = in.get<std::int64_t>();
        const auto update = in.get<std::int64_t>();
        const auto globalStep = in.get<std::int64_t>();
        const auto batch = in.get<std::int32_t>();
        const auto steps = in.get<std::int32_t>();
        const auto taking = in.get<double>();
        const auto allArrived = in.get<double>();
        const auto sentAt = in.get<double>();
        double mine = 0.0;
        std::vector<double> arrivals;
        for (int r = 0; r < mpi.size(); ++r) {
            arrivals.push_back(in.get<double>());
            if (r == rank)
                mine = arrivals.back();
        }
        const int last = lastArrival(arrivals); // a rank
        addParameterWait(
            spans, waitStart, arrived, taking, mine, allArrived, sentAt, server ? last - 1 : last, server ? -1 : 0);
        if (control == 0) {
            for (MpiContext::PendingSend& f : forwards)
                mpi.complete(f);
            out.clear();
            out.putSpans(spans.spans);
            putRankWork(out, computedSamples, updates, coreTime);
            mpi.send(out.bytes().data(), out.bytes().size(), 0, finalTag);
            return;
        }
        if (batch != settings.batch)
            throw RunFailure("rank 0 asked for a batch of " + std::to_string(batch) + ", this rank planned for "
                + std::to_string(settings.batch));
        RoundLoss loss; // local-sgd: its round's samples' losses
        int samples = 0;
        if (local) {
            in.getFloats(models.model(worker), params.size());
            loss = localRound(models, worker, steps, part.cursor, settings.batch, part.workspace, *problem, part.view,
                stragglers, globalStep, rule, LearningRateRule(settings), never, spans);
            samples = loss.samples;
        } else {
            in.getFloats(params.data(), params.size());
            const std::uint32_t* indices = part.cursor.next(settings.batch);
            samples = computeAndDelay(
                [&] { return part.compute(params.data(), indices); }, stragglers, worker, update, never, spans);
        }
        computedSamples += samples;
        ++updates;
        const double sendStart = MpiContext::now();
        out.clear();
        out.put(update);
        out.put(mpi.toRoot(sendStart));
        out.putSpans(spans.spans);
        spans.spans.clear();
        if (local) { // its model, with its round's losses
            out.put(loss.sum);
            out.put(static_cast<std::int32_t>(loss.samples));
            out.putFloats(models.model(worker), params.size());
        } else { // its part of the fixed tree
            part.put(out);
        }
        gradient = mpi.startSend(out.bytes().data(), out.bytes().size(), 0, gradientTag);
        spans.add(SpanKind::Communicate, sendStart, MpiContext::now());
    }
}

} // namespace sgdscope
