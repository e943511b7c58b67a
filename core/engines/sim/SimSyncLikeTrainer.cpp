#include "core/engines/sim/SimSyncLikeTrainer.h"

#include "core/engines/sim/SpanWindows.h"
#include "core/train/UpdateRule.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace sgdscope {

SimSyncLikeTrainer::SimSyncLikeTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode,
    SimPlatformChoice platform, int hosts, bool server)
    : Trainer(std::move(problem), std::move(settings), mode)
    , m_platform(std::move(platform))
    , m_cost(m_problem->spec, m_problem->layout)
    , m_cursor(m_order)
    , m_velocity(m_params.size(), 0.0f)
    , m_server(server)
{
    SimWorld::get().ensurePlatform(m_platform, std::max(hosts, m_settings.workers + (server ? 1 : 0)));
    SimWorld::get().place(m_settings.workers, server); // throws if they do not fit
    m_mathThreads = std::max(1, omp_get_max_threads()); // this machine's cores for the math (OMP_NUM_THREADS)
    prepareReduction();
}

SimSyncLikeTrainer::~SimSyncLikeTrainer() = default;

void SimSyncLikeTrainer::settingsChanged()
{
    SimWorld::get().place(m_settings.workers, m_server); // throws if they do not fit
    prepareReduction();
    if (mode() == Mode::LocalSgd) // every worker goes on from the shared model (settings change between rounds)
        m_models.prepare(m_settings.workers, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum,
            passSamples(), m_params);
}

bool SimSyncLikeTrainer::prepareReduction()
{
    if (mode() == Mode::LocalSgd && m_models.workers() != m_settings.workers)
        m_models.prepare(m_settings.workers, m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.accum,
            passSamples(), m_params);
    if (!m_reduction.prepare(m_settings.batch, chunkSizeFor(m_settings.batch), m_settings.workers, m_settings.accum,
            passSamples(), m_params.size()))
        return false;
    for (int t = 0; t < m_mathThreads; ++t)
        workspace(t); // one per thread of the math, allocated outside the parallel region
    return true;
}

std::vector<int> SimSyncLikeTrainer::sliceSteps(std::int64_t updates) const
{
    std::vector<int> steps;
    if (mode() != Mode::LocalSgd)
        return std::vector<int>(static_cast<std::size_t>(updates), 1);
    std::int64_t stepsLeft = stepsToReach(m_samples, m_settings.sampleBudget, m_settings.batch);
    for (std::int64_t done = 0; stepsLeft > 0 && (done == 0 || done + m_settings.localSteps <= updates);) {
        const int round = localRoundSteps(m_settings.localSteps, stepsLeft);
        steps.push_back(round);
        done += round;
        stepsLeft -= round;
    }
    return steps;
}

std::vector<std::vector<double>> SimSyncLikeTrainer::drawFactors(
    const std::vector<int>& steps, const std::vector<int>& samples)
{
    std::vector<std::vector<double>> factors;
    for (const int n : steps) {
        std::vector<double> perWorker;
        for (int w = 0; w < m_settings.workers; ++w) {
            double factor = 0.0; // the mean over the update's steps (each drawn for its global step)
            for (int h = 0; h < n; ++h)
                factor += samples[static_cast<std::size_t>(w)] > 0 ? m_stragglers.slowdown(w, m_step + h) : 1.0;
            perWorker.push_back(factor / n);
        }
        m_step += n;
        factors.push_back(std::move(perWorker));
    }
    return factors;
}

RoundLoss SimSyncLikeTrainer::computeRound(int steps, double& spread, std::int64_t samplesDone)
{
    // Each worker's local steps on its own model (independent: on this machine's cores), then the average.
    const int workers = m_settings.workers;
    m_models.startRound(m_cursor, steps, m_settings.batch);
    std::vector<RoundLoss> losses(static_cast<std::size_t>(workers));
    const int threads = std::min(m_mathThreads, workers);
    const MomentumSgd rule(m_settings.momentum);
    const LearningRateRule rate(m_settings);
    std::exception_ptr failure;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic)
    for (int w = 0; w < workers; ++w) {
        try {
            losses[static_cast<std::size_t>(w)] = m_models.localSteps(
                w, workspaceAt(omp_get_thread_num()), m_problem->layout, m_view, rule, rate, samplesDone);
        } catch (...) {
#pragma omp critical(sgdscope_sim_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    RoundLoss loss;
    for (const RoundLoss& worker : losses)
        loss.add(worker);
    if (!loss.diverged())
        spread = m_models.averageAll(m_params.data());
    return loss;
}

double SimSyncLikeTrainer::computeUpdate(
    const std::uint32_t* indices, const std::vector<char>& dropped, std::int64_t samplesDone)
{
    // The workers' parts are independent: compute them on this machine's cores.
    const int workers = m_settings.workers;
    const int threads = std::min(m_mathThreads, workers);
    const auto scale = static_cast<float>(1.0 / m_reduction.chunks.batch);
    std::exception_ptr failure;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(dynamic)
    for (int w = 0; w < workers; ++w) {
        if (static_cast<std::size_t>(w) < dropped.size() && dropped[static_cast<std::size_t>(w)])
            continue; // left out: its subtrees are zero in the combine
        try {
            computeWorkerPart(workspaceAt(omp_get_thread_num()), m_problem->layout, m_params.data(), m_view, indices,
                m_reduction.plan.workers[static_cast<std::size_t>(w)], scale, m_reduction.buffers,
                m_reduction.chunkLoss.data());
        } catch (...) {
#pragma omp critical(sgdscope_sim_failure)
            failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    return m_reduction.applyKept(dropped, MomentumSgd(m_settings.momentum),
        LearningRateRule(m_settings).ofBatch(samplesDone), m_params.data(), m_velocity.data(), m_params.size());
}

void SimSyncLikeTrainer::workerWork(std::vector<double>& flops, std::vector<int>& samples) const
{
    const double mergeFlops = SimWorld::get().stepsMeasured() ? 0.0 : m_cost.addFlops;
    for (int w = 0; w < m_settings.workers; ++w) {
        const int n = m_reduction.workerSamples(w);
        const auto merges = static_cast<double>(m_reduction.plan.workers[static_cast<std::size_t>(w)].treeAdditions());
        flops.push_back(n * m_cost.flopsPerSample + merges * mergeFlops);
        samples.push_back(n);
    }
}

void SimSyncLikeTrainer::reportWindow(std::vector<std::vector<Span>>& perWorker, std::vector<std::size_t>& next,
    double from, double to, double base, TrainingObserver& observer)
{
    m_windowSpans.clear();
    takeSpansOfWindow(perWorker, next, from, to, base, m_windowSpans);
    reportWorkerTime(WorkWindow {from + base, to + base, m_settings.workers}, m_windowSpans, observer);
    m_seconds = to + base;
}

} // namespace sgdscope
