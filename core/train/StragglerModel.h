#pragma once

#include "core/train/TrainerSettings.h"

#include <cstdint>
#include <vector>

namespace sgdscope {

/// The largest slow-down factor of any straggler option (and the cut of --heavy-tail's draws).
inline constexpr double maxStragglerFactor = 1000.0;

/// How much slower a worker is at one unit of its work (step: a sync update, or its own n-th async push): the
/// product of
///  - the factors given for it (--slow W:F);
///  - a fraction of slow workers (--slow-fraction F:X): the first round(F P) workers of a seeded
///    permutation of the P workers are X times slower;
///  - a rotating straggler (--rotating-straggler X): at every step, one worker drawn from (seed, step) is X
///    times slower;
///  - jitter: a seeded log-normal factor exp(sigma z) drawn from (seed, worker, step);
///  - a heavy tail: a seeded Pareto factor u^(-1/shape) >= 1 drawn from (seed, worker, step).
/// The same in every engine and on every run. On one machine all workers are equally fast, so slowness is
/// modelled: a worker F times slower is busy F times as long, its compute followed by a delay of (F - 1)
/// times its compute time, as a slow remote machine would be slow without using our cores. Factors below 1
/// count as 1 (only slow-downs can be modelled).
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

    /// Whether `worker` is one of the --slow-fraction workers (of the current worker count). Read-only, so
    /// workers may ask at once; fast after prepare() for the current settings.
    bool inSlowFraction(int worker) const;
    /// Computes the slow fraction's workers for the current settings (call from the driving thread, before
    /// the workers start: Trainer::run does).
    void prepare();

private:
    const TrainerSettings* m_settings;
    std::vector<char> m_slowSet; // per worker, for m_slowSetWorkers workers
    int m_slowSetWorkers = -1;
    double m_slowSetFraction = -1.0;
};

} // namespace sgdscope
