#include "core/data/Dataset.h"

namespace sgdscope {

void Dataset::truncate(std::int64_t n)
{
    inputs.conservativeResize(Eigen::NoChange, n);
    if (targets.size() > 0)
        targets.conservativeResize(Eigen::NoChange, n);
    if (!labels.empty())
        labels.resize(static_cast<std::size_t>(n));
}

} // namespace sgdscope
