#include "core/train/UpdateRule.h"

#include <algorithm>
#include <atomic>

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

float LearningRateRule::at(std::int64_t staleness) const
{
    double lr = m_learningRate;
    if (m_policy == AsyncLearningRate::Staleness)
        lr /= static_cast<double>(std::max<std::int64_t>(1, staleness));
    return static_cast<float>(lr);
}

} // namespace sgdscope
