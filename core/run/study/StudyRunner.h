#pragma once

#include "core/run/study/PointExecutor.h"
#include "core/run/study/StudyFiles.h"
#include "core/run/study/StudyPlan.h"
#include "core/run/study/StudyTable.h"

#include <functional>
#include <string>
#include <vector>

namespace sgdscope {

/// Draws a study's charts into its folder from its table (provided by the ui layer, as a headless run's
/// ChartWriter is; may be empty). Returns the problems, empty on success.
using StudyChartWriter = std::function<std::vector<std::string>(const std::string& dir, const StudyTable& table)>;

/// What a study needs from its front end.
struct StudyFrontEnd
{
    StudyChartWriter charts;
    std::string command; // the command as typed, for study.json
};

/// `sgdscope --study DIR ...` on this machine: checks every point (StudyPlan), then runs them as headless runs in
/// child processes, -j N at once (points that time the cores alone unless --share-cores), and writes DIR/study.json,
/// DIR/results.csv and the charts. A folder that already holds this study continues it: a point whose run folder
/// holds a complete summary.json is kept, not run again. SIGINT or SIGTERM stops the running points (they write
/// an interrupted summary), marks them and writes the study's files. Returns the exit code: 0 every point
/// finished (a diverged run is a result); 1 the study is incomplete (points failed, were lost or were refused by
/// their run: the same command again runs all but the refused); 2 bad input, nothing run (one line on stderr naming
/// the axis, point or option);
/// 128 + the signal when stopped.
int runStudy(const StudySpec& spec, const std::string* configText, const StudyFrontEnd& frontEnd);

/// The plan's study, its points run by `executor` (rank 0 of an MPI study passes its ranks). `where` describes
/// the executor for the start line ("-j 2 on this machine"). Returns the exit code as runStudy does.
int runStudyPoints(const StudyPlan& plan, const std::string* configText, PointExecutor& executor,
    const StudyFrontEnd& frontEnd, const std::string& where, double startedAt);

} // namespace sgdscope
