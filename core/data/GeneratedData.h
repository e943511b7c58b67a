#pragma once

#include "core/data/Dataset.h"

#include <cstdint>

namespace sgdscope {

/// The seed example's data: y = x^2 at n points evenly spaced on [-2, 2] (computed in double, rounded to
/// float), one input and one target.
Dataset makeParabola(std::int64_t n);

/// Gaussian blobs: `classes` centres drawn from N(0, 1) in `features` dimensions, each sample its class
/// centre plus N(0, spread^2) noise; a seeded classification set with the work profile of a real one.
Dataset makeBlobs(std::int64_t n, int features, int classes, double spread, std::uint64_t seed);

} // namespace sgdscope
