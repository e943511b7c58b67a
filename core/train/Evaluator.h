#pragma once

#include "core/data/Dataset.h"
#include "core/nn/MlpWorkspace.h"
#include "core/train/Problem.h"

#include <memory>
#include <vector>

namespace sgdscope {

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
    EvalSums evaluate(const float* params, const Dataset& data, int threads);

private:
    const Problem* m_problem;
    std::vector<std::unique_ptr<MlpWorkspace>> m_workspaces;
};

} // namespace sgdscope
