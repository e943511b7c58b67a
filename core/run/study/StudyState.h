#pragma once

#include "core/run/study/PointResult.h"
#include "core/run/study/StudyPlan.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace sgdscope {

/// A point the study knows of (it ran, runs or is due), and what became of it.
struct PointRecord
{
    StudyPoint point;
    PointStatus status = PointStatus::Pending;
    std::optional<PointResult> result; // a finished point's figures
    std::string message; // why it failed, was refused, lost or skipped
    double wallSeconds = -1.0; // how long its process ran in this session (-1: not run in this session)
    bool reused = false; // finished by an earlier session: kept, not run again
    int rank = -1; // the MPI rank that ran it (-1: this process)
    double startedAt = -1.0; // when its process started and ended, seconds after this session of the study began
    double endedAt = -1.0; // (-1: not in this session)
};

/// The study's progress over its plan: which points are due, what each became, and the --best-of reduction.
/// Points are due rung by rung: every candidate and seed of every group at rung 0; once a group's rung is
/// settled, its candidates are ranked (SuccessiveHalving.h: the median over the seeds of the time to the target,
/// else of the final training loss) and the best go on to the next rung. After the last rung the best candidate
/// is the group's choice, and its full runs are the group's kept points: what the charts draw. Without
/// --best-of a group has one candidate, chosen as soon as its runs are known.
///
/// Everything here follows from the points' results alone, never from the order they ended in: the same
/// study gives the same table with any number of jobs or ranks.
class StudyState
{
public:
    explicit StudyState(const StudyPlan& plan);

    /// The due point to run next (lowest rung first, then the plan's order), marked running; nullptr if none, or if
    /// the next times the cores (StudyPoint::timesTheCores) and `coreTimersAllowed` is false: it waits for the cores,
    /// and the points after it wait for it, in order.
    PointRecord* takeNext(bool coreTimersAllowed);
    /// Whether a due point is waiting.
    bool hasDue() const { return !m_due.empty(); }
    /// Whether the next due point times the cores.
    bool nextTimesTheCores() const;
    /// Records how a taken point ended (its result and message set before) and makes the next rung's points due
    /// when its group's rung is settled.
    void settle(PointRecord& record, PointStatus status);
    /// Puts a running point back among the due ones (a study that stops before it could start it).
    void markPending(PointRecord& record);

    const StudyPlan& plan() const { return m_plan; }
    /// Every record, in the plan's order (group, candidate, seed, rung).
    std::vector<const PointRecord*> records() const;
    int total() const { return m_plan.totalPoints(); }
    int settledCount() const { return m_settled; }
    /// The steps of the settled points, summed (see StudyPlan::totalSteps).
    double settledSteps() const { return m_settledSteps; }
    int finishedCount() const { return m_finished; }
    int runningCount() const { return m_running; }
    /// Nothing due and nothing running.
    bool quiet() const { return m_due.empty() && m_running == 0; }

    /// One rung of a group's --best-of: its candidates, their runs' steps, scores and whether they went on.
    struct RungRecord
    {
        int rung = 0;
        std::vector<int> candidates;
        std::vector<CandidateScore> scores; // set once the rung is settled
        std::vector<bool> promoted; // went on to the next rung (the last rung: chosen)
        bool settled = false;
    };
    struct GroupRecord
    {
        std::vector<RungRecord> rungs;
        int chosen = -1; // the kept candidate, once known
    };
    const GroupRecord& group(int g) const { return m_groups[static_cast<std::size_t>(g)]; }
    /// Whether `record` is a kept point: a full run of its group's chosen candidate (every full run without
    /// --best-of).
    bool kept(const PointRecord& record) const;

private:
    using Key = std::tuple<int, int, int, int>; // (group, candidate, seed, rung)
    using DueKey = std::tuple<int, int, int, int>; // (rung, group, candidate, seed): the order points are taken in
    void makeDue(int group, int candidate, int seed, int rung);
    void settleRung(int group, int rung);

    const StudyPlan& m_plan;
    std::map<Key, std::unique_ptr<PointRecord>> m_records;
    std::set<DueKey> m_due;
    std::vector<GroupRecord> m_groups;
    int m_settled = 0;
    double m_settledSteps = 0.0;
    int m_finished = 0;
    int m_running = 0;
};

} // namespace sgdscope
