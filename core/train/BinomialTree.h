#pragma once

#include <vector>

namespace sgdscope {

/// The binomial tree over members 0..n-1 (workers or ranks) that gradients go up and parameters come down, as MPI's
/// broadcast trees: member m > 0 hangs from m minus its lowest set bit, and hears from m + 2^j for every 2^j below
/// that bit (member 0: below n). Used by the simulated cluster's sync and the MPI engine's parameters.
inline int binomialParent(int member)
{
    return member - (member & -member);
}

/// The children of `member` in a tree of `members`, the smallest subtree first.
inline std::vector<int> binomialChildren(int member, int members)
{
    std::vector<int> children;
    const int limit = member == 0 ? members : (member & -member);
    for (int step = 1; step < limit && member + step < members; step *= 2)
        children.push_back(member + step);
    return children;
}

} // namespace sgdscope
