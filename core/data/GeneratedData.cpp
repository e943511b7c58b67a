#include "core/data/GeneratedData.h"

#include "core/common/Rng.h"

namespace sgdscope {

Dataset makeParabola(std::int64_t n)
{
    Dataset d;
    d.name = "parabola";
    d.inputs.resize(1, n);
    d.targets.resize(1, n);
    for (std::int64_t i = 0; i < n; ++i) {
        const double x = n == 1 ? 0.0 : -2.0 + 4.0 * static_cast<double>(i) / static_cast<double>(n - 1);
        const auto xf = static_cast<float>(x);
        d.inputs(0, i) = xf;
        d.targets(0, i) = xf * xf; // y = x^2 of the float input, as the seed example computes it
    }
    return d;
}

Dataset makeBlobs(std::int64_t n, int features, int classes, double spread, std::uint64_t seed)
{
    Rng rng(mixSeed(seed, 0xB10B5ULL));
    Eigen::MatrixXd centres(features, classes);
    for (Eigen::Index i = 0; i < centres.size(); ++i)
        centres.data()[i] = rng.normal();
    Dataset d;
    d.name = "blobs";
    d.classes = classes;
    d.inputs.resize(features, n);
    d.labels.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const auto label = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes)));
        d.labels[static_cast<std::size_t>(i)] = label;
        for (int f = 0; f < features; ++f)
            d.inputs(f, i) = static_cast<float>(centres(f, label) + spread * rng.normal());
    }
    return d;
}

} // namespace sgdscope
