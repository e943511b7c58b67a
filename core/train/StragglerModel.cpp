#include "core/train/StragglerModel.h"

#include "core/common/Rng.h"

#include <cmath>

namespace sgdscope {

double StragglerModel::slowdown(int worker, std::int64_t step) const
{
    double factor = 1.0;
    for (const auto& slow : m_settings->stragglers) {
        if (slow.worker == worker)
            factor *= slow.factor;
    }
    if (m_settings->jitter > 0) {
        Rng rng(mixSeed(
            m_settings->seed ^ 0x7177E5ULL, static_cast<std::uint64_t>(worker), static_cast<std::uint64_t>(step)));
        factor *= std::exp(m_settings->jitter * rng.normal());
    }
    return factor > 1.0 ? factor : 1.0;
}

} // namespace sgdscope
