#pragma once

#include "core/data/Dataset.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/train/Problem.h"

#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace sgdscope {

/// An evaluation given up because a stop was requested (a signal): its sums are not whole.
struct EvaluationCancelled : std::exception
{
    const char* what() const noexcept override { return "the evaluation was cancelled by a stop request"; }
};

/// Loss (and accuracy) of parameters on a whole data set, in fixed blocks of 1024 samples summed in a fixed
/// order, so the value does not depend on how many threads compute it. Not thread-safe: one evaluator per
/// trainer; it opens its own OpenMP team.
class Evaluator
{
public:
    explicit Evaluator(const Problem& problem)
        : m_problem(&problem)
    {
    }
    /// With `cancelled`, asked before each block: once it says true, the remaining blocks are skipped and
    /// EvaluationCancelled is thrown (a whole-set evaluation can take seconds that a stopped run does not have).
    EvalSums evaluate(
        const float* params, const Dataset& data, int threads, const std::function<bool()>& cancelled = {});

private:
    const Problem* m_problem;
    std::vector<std::unique_ptr<NetworkWorkspace>> m_workspaces;
};

} // namespace sgdscope
