#include "core/train/LocalSgd.h"

#include "core/train/ChunkGradients.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

int localRoundSteps(int localSteps, std::int64_t stepsLeft)
{
    return static_cast<int>(std::min<std::int64_t>(localSteps, std::max<std::int64_t>(1, stepsLeft)));
}

void LocalSgdModels::prepare(
    int workers, int batch, int chunk, int accum, int passSamples, const ParamVector& params, int computing)
{
    m_models.resize(static_cast<std::size_t>(workers));
    m_weights.assign(static_cast<std::size_t>(workers), 0.0f);
    for (int w = 0; w < workers; ++w) {
        Model& m = m_models[static_cast<std::size_t>(w)];
        m.slice = balancedPart(batch, workers, w);
        m.params = params;
        if ((computing < 0 || w == computing) && m.velocity.size() != params.size())
            m.velocity.assign(params.size(), 0.0f);
        m_weights[static_cast<std::size_t>(w)] = static_cast<float>(static_cast<double>(m.slice.size()) / batch);
        if (m.slice.size() == 0 || (computing >= 0 && w != computing))
            continue;
        m.reduction.prepare(m.slice.size(), chunk, accum, passSamples);
        m.reduction.ensureBuffers(params.size());
    }
}

void LocalSgdModels::startRound(BatchCursor& cursor, int steps, int batch)
{
    m_roundSteps = steps;
    m_roundBatch = batch;
    const auto size = static_cast<std::size_t>(batch);
    m_roundIndices.resize(static_cast<std::size_t>(steps) * size);
    for (int h = 0; h < steps; ++h) {
        const std::uint32_t* indices = cursor.next(batch);
        std::copy(indices, indices + size, m_roundIndices.begin() + static_cast<std::ptrdiff_t>(h) * batch);
    }
}

RoundLoss LocalSgdModels::localSteps(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
    const SampleView<float>& data, const MomentumSgd& rule, const LearningRateRule& rate, std::int64_t samplesDone,
    LocalStepHooks& hooks)
{
    RoundLoss loss;
    Model& m = m_models[static_cast<std::size_t>(worker)];
    const int n = m.slice.size();
    if (n == 0)
        return loss;
    for (int h = 0; h < m_roundSteps; ++h) {
        hooks.computing(h);
        const std::uint32_t* batch = m_roundIndices.data() + static_cast<std::size_t>(h) * m_roundBatch;
        const double stepLoss = m.reduction.compute(workspace, layout, m.params.data(), data, batch + m.slice.begin);
        loss.sum += stepLoss;
        loss.samples += n;
        hooks.computed(h, n);
        if (!std::isfinite(stepLoss))
            break;
        hooks.applying(h);
        const float lr = rate.ofBatch(samplesDone + static_cast<std::int64_t>(h) * m_roundBatch);
        rule.update(m.params.data(), m.velocity.data(), m.reduction.gradient(), lr, 0, m.params.size());
        hooks.applied(h);
    }
    return loss;
}

RoundLoss LocalSgdModels::localSteps(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
    const SampleView<float>& data, const MomentumSgd& rule, const LearningRateRule& rate, std::int64_t samplesDone)
{
    LocalStepHooks none;
    return localSteps(worker, workspace, layout, data, rule, rate, samplesDone, none);
}

void LocalSgdModels::average(float* params, std::size_t first, std::size_t last, double* spread)
{
    for (std::size_t i = first; i < last; ++i) {
        float sum = 0.0f;
        for (std::size_t o = 0; o < m_models.size(); ++o)
            sum += m_weights[o] * m_models[o].params[i];
        for (std::size_t o = 0; o < m_models.size(); ++o) {
            float& value = m_models[o].params[i];
            const double d = static_cast<double>(value) - sum;
            spread[o] += d * d;
            value = sum;
        }
        params[i] = sum;
    }
}

double LocalSgdModels::averageAll(float* params)
{
    m_squares.assign(m_models.size(), 0.0);
    const std::size_t size = m_models.empty() ? 0 : m_models.front().params.size();
    average(params, 0, size, m_squares.data());
    return meanDistance(m_squares.data(), workers());
}

double LocalSgdModels::meanDistance(const double* squares, int workers)
{
    double spread = 0.0;
    for (int o = 0; o < workers; ++o)
        spread += std::sqrt(squares[o]);
    return spread / workers;
}

} // namespace sgdscope
