#include "core/data/Dataset.h"

#include <cmath>
#include <set>

namespace sgdscope {

void Dataset::truncate(std::int64_t n)
{
    inputs.conservativeResize(Eigen::NoChange, n);
    if (targets.size() > 0)
        targets.conservativeResize(Eigen::NoChange, n);
    if (!labels.empty())
        labels.resize(static_cast<std::size_t>(n));
}

int classesInTargets(const Dataset& data, int* distinct)
{
    constexpr float mostClasses = 256;
    constexpr std::int64_t samplesPerClass = 4; // on average: fewer, and the values are more likely measurements
    if (distinct)
        *distinct = 0;
    if (data.isClassification() || data.targets.rows() != 1 || data.size() < 2)
        return 0;
    std::set<int> values;
    for (Eigen::Index i = 0; i < data.targets.cols(); ++i) {
        const float v = data.targets(0, i);
        if (!(v >= 0 && v < mostClasses) || v != std::floor(v))
            return 0;
        values.insert(static_cast<int>(v));
    }
    const int count = static_cast<int>(values.size());
    const int classes = *values.rbegin() + 1;
    if (distinct)
        *distinct = count;
    if (count < 2 || 2 * count < classes || data.size() < samplesPerClass * count)
        return 0;
    return classes;
}

Dataset withTargetsAsClasses(const Dataset& data, int classes)
{
    Dataset d;
    d.name = data.name;
    d.inputs = data.inputs;
    d.classes = classes;
    d.labels.resize(static_cast<std::size_t>(data.size()));
    for (Eigen::Index i = 0; i < data.targets.cols(); ++i)
        d.labels[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(data.targets(0, i));
    return d;
}

} // namespace sgdscope
