#include "core/train/UpdateRule.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>

namespace sgdscope {

const float* MomentumSgd::direction(const float* g, float* v, std::size_t first, std::size_t last) const
{
    if (m_momentum == 0.0f)
        return g;
    for (std::size_t i = first; i < last; ++i)
        v[i] = m_momentum * v[i] + g[i];
    return v;
}

void MomentumSgd::apply(float* w, const float* step, float lr, std::size_t first, std::size_t last)
{
    for (std::size_t i = first; i < last; ++i)
        w[i] -= lr * step[i];
}

void MomentumSgd::applyRelaxed(float* w, const float* step, float lr, std::size_t first, std::size_t last)
{
    for (std::size_t i = first; i < last; ++i) {
        std::atomic_ref<float> element(w[i]);
        element.store(element.load(std::memory_order_relaxed) - lr * step[i], std::memory_order_relaxed);
    }
}

void MomentumSgd::update(float* w, float* v, const float* g, float lr, std::size_t first, std::size_t last) const
{
    if (m_momentum == 0.0f) {
        for (std::size_t i = first; i < last; ++i)
            w[i] -= lr * g[i];
        return;
    }
    for (std::size_t i = first; i < last; ++i) {
        v[i] = m_momentum * v[i] + g[i];
        w[i] -= lr * v[i];
    }
}

double LearningRateRule::scheduled(std::int64_t samplesDone) const
{
    if (m_schedule == LrSchedule::Constant || m_budget <= 0 || m_budget == std::numeric_limits<std::int64_t>::max())
        return m_learningRate;
    const double left = 1.0 - static_cast<double>(samplesDone) / static_cast<double>(m_budget);
    return m_learningRate * std::max(0.0, left);
}

float LearningRateRule::ofPush(std::int64_t staleness, int samples, std::int64_t samplesDone) const
{
    double lr = scheduled(samplesDone);
    if (m_policy != AsyncLearningRate::Constant && m_batch > 0)
        lr = lr * static_cast<double>(samples) / static_cast<double>(m_batch);
    if (m_policy == AsyncLearningRate::Staleness)
        lr /= static_cast<double>(std::max<std::int64_t>(1, staleness));
    return static_cast<float>(lr);
}

DelayCompensation::DelayCompensation(double lambda, bool adaptive, std::size_t size)
    : m_lambda(static_cast<float>(lambda))
    , m_adaptive(adaptive)
    , m_size(size)
    , m_meanSquare(adaptive && lambda != 0.0 ? size : 0, 0.0f)
{
}

void DelayCompensation::setLambda(double lambda)
{
    m_lambda = static_cast<float>(lambda);
    if (m_adaptive && m_lambda != 0.0f && m_meanSquare.empty())
        m_meanSquare.assign(m_size, 0.0f);
}

double DelayCompensation::compensate(float* g, const float* now, const float* read, std::size_t size)
{
    if (m_lambda == 0.0f)
        return 0.0;
    double gradientSquares = 0.0;
    double termSquares = 0.0;
    for (std::size_t i = 0; i < size; ++i) {
        const float gi = g[i];
        float lambda = m_lambda;
        if (m_adaptive) {
            m_meanSquare[i] = meanSquareDecay * m_meanSquare[i] + (1.0f - meanSquareDecay) * (gi * gi);
            lambda = m_lambda / std::sqrt(m_meanSquare[i] + epsilon);
        }
        const float term = lambda * gi * gi * (now[i] - read[i]);
        g[i] = gi + term;
        gradientSquares += static_cast<double>(gi) * gi;
        termSquares += static_cast<double>(term) * term;
    }
    return gradientSquares > 0 ? std::sqrt(termSquares / gradientSquares) : 0.0;
}

AppliedPush PushRule::apply(float* params, float* gradient, float* velocity, const float* read, std::size_t size,
    std::int64_t staleness, int samples, std::int64_t samplesDone, const float* step) const
{
    assert(!(step && m_compensation.active())); // a compensated push's step is taken here, after the compensation
    AppliedPush applied;
    if (m_compensation.active())
        applied.compensation = m_compensation.compensate(gradient, params, read, size);
    if (!step)
        step = m_rule.direction(gradient, velocity, 0, size);
    applied.learningRate = m_rate.ofPush(staleness, samples, samplesDone);
    MomentumSgd::apply(params, step, applied.learningRate, 0, size);
    return applied;
}

} // namespace sgdscope
