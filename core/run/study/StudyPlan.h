#pragma once

#include "core/engines/EngineKind.h"
#include "core/run/study/StudySpec.h"
#include "core/run/study/SuccessiveHalving.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sgdscope {

/// One run of a study, at one rung: the options its command line gives (`sgdscope --headless --out FOLDER
/// [--config FILE] --name=value ...`) and the name of its run folder under DIR/points/.
struct StudyPoint
{
    std::string id; // its folder's name, from its axis values ("mode-sync_workers-8_seed-1"); unique in the study
    int group = 0; // the combination of the --sweep axes (StudyPlan::groupValues)
    int candidate = 0; // the --best-of value (0 without --best-of)
    int seed = 0; // the seed's index (0 without --seeds)
    int rung = 0; // successive halving's rung (the last is the full run)
    std::int64_t steps = 0; // its sync updates (a rung's budget, or the run's own)
    StudySpec::Options options; // without --headless, --out and --config
    EngineKind engine = EngineKind::Threads;
    bool measuresThisMachine = false; // a simulated point on the local clusters (it calibrates on the cores)
    bool hasTarget = false;
    std::string skipped; // --skip-impossible: why it cannot run ("" if it can)

    /// Whether its figures time this machine's cores: a threads-engine point (real seconds), or a simulated point
    /// on a local cluster (its virtual time is calibrated from a real training step here). Such a point runs
    /// alone unless --share-cores: a point beside it would take cores from what it measures.
    bool timesTheCores() const { return engine == EngineKind::Threads || measuresThisMachine; }
};

/// Every point of a study, checked before any runs. The axes are the --sweep axes in their order (a mode list
/// among the shared options becomes the first axis: a point runs one mode), then the --best-of candidates, then
/// the seeds; every combination of the --sweep axes is a group, whose candidates and seeds are its points. Each
/// point's options are checked by the same ConfigBuilder and the same checks of the data and model as a headless
/// run's (run/Experiment.h checkRunnable), so a bad axis value or a combination that cannot run is refused here,
/// naming the axis and the point, before anything runs. A shared option that takes no effect on some points
/// (--backup-workers on a sync point) is left out of those, and said in notes(); one that takes effect on none
/// is refused, as is one whose platform file cannot take a point (--platform with fewer hosts than its workers).
class StudyPlan
{
public:
    /// Throws SgdError ("point mode=backup, workers=1: --mode: backup with 1 worker ...").
    static StudyPlan make(const StudySpec& spec, const std::string* configText);

    const StudySpec& spec() const { return m_spec; }
    /// The --sweep axes (with the mode axis made from a mode list), in order.
    const std::vector<StudyAxis>& axes() const { return m_axes; }
    /// The --best-of candidates (a one-value axis without --best-of).
    const StudyAxis& candidates() const { return m_candidates; }
    bool hasBestOf() const { return m_spec.bestOf.has_value(); }
    /// The seeds (a one-value axis without --seeds or --sweep seed).
    const StudyAxis& seeds() const { return m_seeds; }
    bool hasSeeds() const { return m_seedsSwept; }
    const SuccessiveHalving& halving() const { return m_halving; }

    int groupCount() const { return m_groupCount; }
    int candidateCount() const { return static_cast<int>(m_candidates.values.size()); }
    int seedCount() const { return static_cast<int>(m_seeds.values.size()); }
    /// The value of each --sweep axis in a group (indices into the axes' values).
    std::vector<int> groupIndices(int group) const;
    /// "mode=sync, workers=8" (a group), with the candidate and the seed for a point.
    std::string describeGroup(int group) const;
    std::string describe(const StudyPoint& point) const;

    /// The full run of (group, candidate, seed).
    const StudyPoint& fullPoint(int group, int candidate, int seed) const;
    /// The point at `rung` (a rung before the last: the full point with its budget of --steps).
    StudyPoint point(int group, int candidate, int seed, int rung) const;
    /// Points the study runs at most: every candidate and seed at rung 0, the survivors at later rungs.
    int totalPoints() const;
    /// The sync steps of those points, summed (the rungs' budgets with --halving): the measure of work left.
    double totalSteps() const;

    /// What a reader should know: shared options left out of some points, points that cannot run (skipped).
    const std::vector<std::string>& notes() const { return m_notes; }
    /// Whether every point has a target (time to target is then the measure of --best-of and the charts).
    bool hasTarget() const { return m_hasTarget; }
    /// Whether any point runs on this machine's threads (they time the cores).
    bool hasThreadsPoints() const { return m_threadsPoints; }
    /// Whether any point is simulated on a cluster calibrated on this machine's cores (--cluster local, local-mpi).
    bool hasCalibratedPoints() const { return m_calibratedPoints; }
    /// Whether any point times the cores (StudyPoint::timesTheCores).
    bool hasPointsThatTimeTheCores() const { return m_threadsPoints || m_calibratedPoints; }

private:
    /// Points the study runs at most, or their steps.
    double plannedRuns(bool bySteps) const;
    /// The note on a shared option left out of the points where `dropped` is true (m_points' order): for the axis
    /// whose values decide it if one does, else with the reason at the first such point (`where`, `why`).
    std::string droppedNote(const std::string& name, const std::vector<bool>& dropped, const std::string& where,
        const std::string& why) const;

    StudySpec m_spec;
    std::vector<StudyAxis> m_axes;
    StudyAxis m_candidates;
    StudyAxis m_seeds;
    bool m_seedsSwept = false;
    SuccessiveHalving m_halving {1, 0};
    int m_groupCount = 1;
    std::vector<StudyPoint> m_points; // (group, candidate, seed), the last index fastest
    std::vector<std::string> m_notes;
    bool m_hasTarget = false;
    bool m_threadsPoints = false;
    bool m_calibratedPoints = false;
};

/// "workers-8" parts joined by "_", with characters other than letters, digits, '.', '+' and '-' as '_'.
std::string pointFolderName(const std::vector<std::pair<std::string, std::string>>& parts);

} // namespace sgdscope
