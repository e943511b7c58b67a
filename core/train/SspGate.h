#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace sgdscope {

/// Stale synchronous parallel's rule (Ho et al. 2013), the one every engine keeps: a parameter server's (the
/// simulated cluster's and MPI's) holds and releases workers; the threads engine's workers, which have no server,
/// share one gate and each waits on it for itself. A worker's clock is its pushes applied. A worker at clock n may
/// start its next push only when every worker taking part has at least n - S applied (S: --ssp-bound); so when a
/// push is applied its worker is at most S + 1 ahead of the slowest, and S = 0 waits as sync does. A worker that
/// may not start is held, and released, lowest clock first, by the push that lets it go.
///
/// Not thread-safe: a caller whose workers share a gate serializes every call.
class SspGate
{
public:
    /// `bound`: S; `workers`: how many workers the server serves (0 .. workers - 1).
    void reset(std::int64_t bound, int workers);

    /// Worker w takes part from clock `clock` (the slowest's clock counts only for those taking part).
    void join(int worker, std::int64_t clock);
    /// Worker w leaves (no more pushes this slice): the others no longer wait for it.
    void leave(int worker);
    bool takingPart(int worker) const { return m_clock[static_cast<std::size_t>(worker)] >= 0; }
    /// Worker w's push was applied: its clock moves on by one.
    void advance(int worker);

    /// Whether worker w may start its next push now.
    bool mayStart(int worker) const;
    /// Worker w's clock minus the slowest's (-1 if nobody takes part).
    std::int64_t lead(int worker) const;
    /// The worker taking part with the lowest clock (the lowest number among equals): whom a held worker waits
    /// for; -1 if nobody takes part.
    int slowestWorker() const;

    /// Holds worker w back until the slowest has caught up.
    void hold(int worker);
    /// The held worker the bound now lets start (the lowest clock first), taken off the held ones; -1 if none.
    int nextReleased();
    bool holding() const { return !m_held.empty(); }

private:
    std::int64_t slowest() const;

    std::int64_t m_bound = 0;
    std::vector<std::int64_t> m_clock; // per worker; -1: not taking part
    std::map<std::int64_t, int> m_clocks; // the clocks of those taking part, how many are at each
    std::multimap<std::int64_t, int> m_held; // held workers by clock
};

} // namespace sgdscope
