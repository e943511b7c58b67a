#include "core/run/study/StudyState.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sgdscope {

StudyState::StudyState(const StudyPlan& plan)
    : m_plan(plan)
    , m_groups(static_cast<std::size_t>(plan.groupCount()))
{
    for (int g = 0; g < plan.groupCount(); ++g) {
        RungRecord first;
        first.rung = 0;
        for (int c = 0; c < plan.candidateCount(); ++c) {
            bool any = false;
            for (int s = 0; s < plan.seedCount(); ++s) {
                const StudyPoint& p = plan.fullPoint(g, c, s);
                if (!p.skipped.empty()) {
                    auto record = std::make_unique<PointRecord>();
                    record->point = p;
                    record->status = PointStatus::Skipped;
                    record->message = p.skipped;
                    m_records.emplace(Key {g, c, s, p.rung}, std::move(record));
                    continue;
                }
                any = true;
                makeDue(g, c, s, 0);
            }
            if (any)
                first.candidates.push_back(c);
        }
        first.promoted.assign(first.candidates.size(), false);
        m_groups[static_cast<std::size_t>(g)].rungs.push_back(first);
    }
}

void StudyState::makeDue(int group, int candidate, int seed, int rung)
{
    auto record = std::make_unique<PointRecord>();
    record->point = m_plan.point(group, candidate, seed, rung);
    m_records[Key {group, candidate, seed, rung}] = std::move(record);
    m_due.insert(DueKey {rung, group, candidate, seed});
}

bool StudyState::nextTimesTheCores() const
{
    if (m_due.empty())
        return false;
    const auto& [rung, g, c, s] = *m_due.begin();
    return m_records.at(Key {g, c, s, rung})->point.timesTheCores();
}

PointRecord* StudyState::takeNext(bool coreTimersAllowed)
{
    for (auto it = m_due.begin(); it != m_due.end(); ++it) {
        const auto& [rung, g, c, s] = *it;
        PointRecord* record = m_records.at(Key {g, c, s, rung}).get();
        if (record->point.timesTheCores() && !coreTimersAllowed)
            return nullptr; // (it waits for the cores; the points after it wait for it, in order)
        m_due.erase(it);
        record->status = PointStatus::Running;
        ++m_running;
        return record;
    }
    return nullptr;
}

void StudyState::markPending(PointRecord& record)
{
    if (record.status != PointStatus::Running)
        return;
    --m_running;
    record.status = PointStatus::Pending;
    m_due.insert(DueKey {record.point.rung, record.point.group, record.point.candidate, record.point.seed});
}

void StudyState::settle(PointRecord& record, PointStatus status)
{
    const StudyPoint& p = record.point;
    if (record.status == PointStatus::Running)
        --m_running;
    record.status = status;
    m_due.erase(DueKey {p.rung, p.group, p.candidate, p.seed});
    ++m_settled;
    m_settledSteps += static_cast<double>(p.steps);
    if (isFinished(status))
        ++m_finished;
    settleRung(p.group, p.rung);
}

void StudyState::settleRung(int group, int rung)
{
    GroupRecord& g = m_groups[static_cast<std::size_t>(group)];
    RungRecord& r = g.rungs[static_cast<std::size_t>(rung)];
    if (r.settled)
        return;
    // Each candidate's outcomes over its seeds; the rung waits until every run has settled.
    r.scores.clear();
    for (const int c : r.candidates) {
        std::vector<CandidateOutcome> outcomes;
        for (int s = 0; s < m_plan.seedCount(); ++s) {
            const auto it = m_records.find(Key {group, c, s, rung});
            if (it == m_records.end() || it->second->status == PointStatus::Skipped)
                continue;
            const PointRecord& record = *it->second;
            // A point stopped before its end (a signal, a lost rank) leaves the rung open: it runs again when the
            // study resumes, and the rung is decided then.
            if (!isSettled(record.status) || record.status == PointStatus::Interrupted
                || record.status == PointStatus::Lost)
                return;
            CandidateOutcome o;
            if (record.result && isFinished(record.status)) {
                o.secondsToTarget = record.result->secondsToTarget;
                o.finalLoss = record.result->finalLoss;
            } else {
                o.finalLoss = std::numeric_limits<double>::infinity(); // failed, lost: no result
            }
            outcomes.push_back(o);
        }
        r.scores.push_back(scoreOf(outcomes));
    }
    r.settled = true;
    const std::vector<int> order = rankCandidates(r.scores, m_plan.hasTarget());
    const bool last = m_plan.halving().lastRung(rung);
    const int keep = last ? 1 : std::min<int>(m_plan.halving().survivors(rung + 1), static_cast<int>(order.size()));
    r.promoted.assign(r.candidates.size(), false);
    for (int i = 0; i < keep && i < static_cast<int>(order.size()); ++i)
        r.promoted[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
    if (last) {
        if (!order.empty())
            g.chosen = r.candidates[static_cast<std::size_t>(order.front())];
        return;
    }
    RungRecord next;
    next.rung = rung + 1;
    for (std::size_t i = 0; i < r.candidates.size(); ++i) {
        if (r.promoted[i])
            next.candidates.push_back(r.candidates[i]);
    }
    next.promoted.assign(next.candidates.size(), false);
    g.rungs.push_back(next);
    for (const int c : g.rungs.back().candidates) {
        for (int s = 0; s < m_plan.seedCount(); ++s) {
            if (m_plan.fullPoint(group, c, s).skipped.empty())
                makeDue(group, c, s, rung + 1);
        }
    }
}

std::vector<const PointRecord*> StudyState::records() const
{
    std::vector<const PointRecord*> out;
    out.reserve(m_records.size());
    for (const auto& [key, record] : m_records)
        out.push_back(record.get());
    return out;
}

bool StudyState::kept(const PointRecord& record) const
{
    const StudyPoint& p = record.point;
    if (!m_plan.halving().lastRung(p.rung) || record.status == PointStatus::Skipped)
        return false;
    if (!m_plan.hasBestOf())
        return true;
    return m_groups[static_cast<std::size_t>(p.group)].chosen == p.candidate;
}

} // namespace sgdscope
