#pragma once

#include <cstdint>
#include <vector>

namespace sgdscope {

/// The learning-rate search's pruner: successive halving (Jamieson and Talwalkar, "Non-stochastic best arm
/// identification and hyperparameter optimization", AISTATS 2016; Optuna's SuccessiveHalvingPruner). n
/// candidates first run a budget of full / ETA^k steps; the best ceil(n / ETA) of them run ETA times more; and so
/// on until one runs in full. A rung is an ordinary run with fewer steps (--steps), in a run folder of its own,
/// so every rung's loss can be checked by repeating it alone. A candidate that is clearly worse early is not
/// run further: the candidates' runs cost about (rungs / ETA) x n full runs' work plus the winner's, instead of n.
///
/// Without halving (ETA 0) there is one rung: every candidate runs in full.
class SuccessiveHalving
{
public:
    SuccessiveHalving(int candidates, int eta);

    int rungs() const { return m_rungs; }
    int eta() const { return m_eta; }
    /// How many candidates run rung `rung` (all at rung 0, one at the last).
    int survivors(int rung) const;
    /// The steps of rung `rung` for a run of `fullSteps`: fullSteps / ETA^(rungs - 1 - rung), at least 1.
    std::int64_t budget(int rung, std::int64_t fullSteps) const;
    bool lastRung(int rung) const { return rung == m_rungs - 1; }

private:
    int m_candidates = 1;
    int m_eta = 0;
    int m_rungs = 1;
};

/// How one run of a candidate ended, as the study reads it from its summary.json.
struct CandidateOutcome
{
    double secondsToTarget = -1.0; // < 0: the target was not reached (or none was set)
    double finalLoss = 0.0; // NaN or infinite for a run that diverged or has no loss
};

/// A candidate's standing over its seeds: the medians of its runs' time to the target (infinite if the target
/// was not reached) and final training loss (infinite if diverged). Lower is better: with a target the time
/// first, then the loss; without one the loss.
struct CandidateScore
{
    double seconds = 0.0;
    double loss = 0.0;
};
CandidateScore scoreOf(const std::vector<CandidateOutcome>& seeds);

/// The candidates (indices into `scores`) best first; ties keep the candidates' order.
std::vector<int> rankCandidates(const std::vector<CandidateScore>& scores, bool target);

} // namespace sgdscope
