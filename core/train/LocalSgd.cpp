#include "core/train/LocalSgd.h"

#include "core/train/ChunkGradients.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

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

double LocalSgdModels::computeGradient(int worker, NetworkWorkspace& workspace, const ParameterLayout& layout,
    const SampleView<float>& data, const std::uint32_t* batchIndices)
{
    Model& m = m_models[static_cast<std::size_t>(worker)];
    if (m.slice.size() == 0)
        return 0.0;
    return m.reduction.compute(workspace, layout, m.params.data(), data, batchIndices + m.slice.begin);
}

void LocalSgdModels::applyStep(int worker, const MomentumSgd& rule, float lr)
{
    Model& m = m_models[static_cast<std::size_t>(worker)];
    if (m.slice.size() == 0)
        return;
    rule.update(m.params.data(), m.velocity.data(), m.reduction.gradient(), lr, 0, m.params.size());
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

double LocalSgdModels::meanDistance(const double* squares, int workers)
{
    double spread = 0.0;
    for (int o = 0; o < workers; ++o)
        spread += std::sqrt(squares[o]);
    return spread / workers;
}

} // namespace sgdscope
