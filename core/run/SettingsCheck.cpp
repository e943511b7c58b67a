#include "core/run/SettingsCheck.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/run/Options.h"

namespace sgdscope {

void validateSettings(const TrainerSettings& s, const Problem& problem)
{
    const std::int64_t n = problem.train().size();
    option("workers").checkNumber(s.workers, "--workers");
    if (s.batch < 1 || s.batch > n)
        throw SgdError("--batch: " + std::to_string(s.batch) + " is not allowed; use 1 to " + std::to_string(n)
            + " (the training set has " + std::to_string(n) + " samples)");
    option("accum").checkNumber(s.accum, "--accum");
    if (s.chunk != 0) {
        option("chunk").checkNumber(s.chunk, "--chunk");
        if (s.chunk > s.batch)
            throw SgdError("--chunk: " + std::to_string(s.chunk) + " is larger than the batch of "
                + std::to_string(s.batch) + "; use 1 to " + std::to_string(s.batch) + ", or leave it out");
    }
    option("lr").checkNumber(s.learningRate, "--lr");
    option("momentum").checkNumber(s.momentum, "--momentum");
    if (s.sampleBudget < 1)
        throw SgdError("--steps: the run would train on no samples; use at least 1 step");
    option("jitter").checkNumber(s.jitter, "--jitter");
    for (const auto& slow : s.stragglers) {
        if (slow.worker < 0 || slow.worker >= s.workers)
            throw SgdError("--slow: worker " + std::to_string(slow.worker) + " does not exist; workers are 0 to "
                + std::to_string(s.workers - 1));
        if (!std::isfinite(slow.factor) || slow.factor < 1 || slow.factor > option("slow").max)
            throw SgdError("--slow: factor " + formatNumber(slow.factor) + " for worker " + std::to_string(slow.worker)
                + " is not allowed; use a number from 1 to " + formatNumber(option("slow").max));
    }
}

} // namespace sgdscope
