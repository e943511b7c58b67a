#pragma once

#include "core/train/TrainerSettings.h"

#include <cstdint>

namespace sgdscope {

/// How much slower a worker is at one unit of its work (a sync update, an async push): the product of the
/// straggler factors given for it and, with jitter, a seeded log-normal factor exp(sigma z) drawn from
/// (seed, worker, step), the same in every engine and on every run. On one machine all workers are equally
/// fast, so slowness is modelled: a worker F times slower is busy F times as long, its compute followed by
/// a delay of (F - 1) times its compute time, as a slow remote machine would be slow without using our
/// cores. Factors below 1 count as 1 (only slow-downs can be modelled).
class StragglerModel
{
public:
    explicit StragglerModel(const TrainerSettings& settings)
        : m_settings(&settings)
    {
    }
    double slowdown(int worker, std::int64_t step) const;
    double delaySeconds(int worker, std::int64_t step, double computeSeconds) const
    {
        return (slowdown(worker, step) - 1.0) * computeSeconds;
    }

private:
    const TrainerSettings* m_settings;
};

} // namespace sgdscope
