#pragma once

#include "core/common/Json.h"
#include "core/run/study/PointResult.h"
#include "core/run/study/StudyAxis.h"

#include <optional>
#include <string>
#include <vector>

namespace sgdscope {

class StudyState;

/// A study's results as its table and charts read them: every point's place on the axes, what became of it,
/// and its figures. Built from a running study (tableOf) or read back from its study.json (the window's File >
/// Open study), so the charts of a study are the same whoever draws them.
struct StudyTable
{
    struct Row
    {
        std::string id; // the run folder's name (the folder is DIR/points/ID)
        std::vector<std::string> values; // per axis
        std::string candidate; // the --best-of value ("" without)
        std::string seed; // "" without --seeds
        int rung = 0;
        bool fullRun = true; // the last rung
        std::int64_t steps = 0;
        PointStatus status = PointStatus::Pending;
        bool kept = false; // a full run of its group's chosen candidate: what the charts draw
        std::optional<PointResult> result;
        std::string message;
        int rank = -1;
    };
    std::vector<StudyAxis> axes; // the --sweep axes (the mode axis among them), in order
    std::string bestOf; // the --best-of option ("" without)
    bool seeds = false;
    bool target = false; // every point has a target: time to target is the measure
    std::vector<Row> rows; // in the plan's order (group, candidate, seed, rung)

    /// The index of the axis `name`, or -1.
    int axisIndex(const std::string& name) const;
};

/// The table of a study as it stands.
StudyTable tableOf(const StudyState& state);

/// results.csv: one row per point the study knows of, in the plan's order: its axis values, candidate, seed,
/// rung, steps and whether it is kept, its status, then its figures (the mode's clock: virtual seconds on a
/// simulated cluster). Nothing in it depends on how the points were scheduled (no wall-clock times), so a study
/// run with -j 1, -j 4, under mpirun or resumed after a stop gives the same file.
std::string resultsCsv(const StudyTable& table);

/// The members of study.json that describe the table ("axes", "best_of" name, "points"); readTable reads them
/// back. (study.json's other members are the runner's: StudyRunner.h.)
Json tableJson(const StudyTable& table, const std::vector<Json>& pointExtras);
/// Reads the table back from a study.json; throws SgdError naming the file's member that is wrong.
StudyTable readTable(const Json& study, const std::string& what);

} // namespace sgdscope
