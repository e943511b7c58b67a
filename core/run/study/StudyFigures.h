#pragma once

#include "core/run/study/StudyTable.h"

#include <string>
#include <vector>

namespace sgdscope {

/// One x of a chart's line: the kept runs there (one per seed), as their smallest, median and largest value,
/// and their run folders (relative to the study's folder), the median's first.
struct FigurePoint
{
    double x = 0.0;
    double low = 0.0;
    double median = 0.0;
    double high = 0.0;
    std::vector<std::string> folders;
    std::vector<std::string> points; // the runs' ids, as folders
    int withoutValue = 0; // runs in the median that have no value (a target missed, a diverged loss): not in the band
    std::string where; // "mode=sync, workers=8"
};

/// A line of a chart: the kept points of one combination of the axes other than the chart's x.
struct FigureLine
{
    std::string name; // "sync", "sync · cluster=wan"
    std::string mode; // the line's mode (its colour), "" for a reference line
    int variant = 0; // lines of the same mode are told apart by shade and dash
    bool reference = false; // a reference (ideal speedup): no band, no markers
    std::vector<FigurePoint> points; // by x
};

/// A chart of a study, as the ui layer draws it (ui/charts/StudyChart.h): what it shows, its axes and lines.
/// The charts plot the kept points: with --best-of, each combination at its chosen value.
struct StudyFigure
{
    std::string file; // "time-to-target-vs-workers.png"
    std::string title; // "Time to target against workers"
    std::string xTitle;
    std::string yTitle;
    bool logX = false;
    double logXBase = 10.0;
    bool logY = false;
    bool fromZero = false; // a linear y axis from 0 (idle, efficiency)
    std::vector<FigureLine> lines;
    std::string note; // what the band is, what is missing ("2 runs did not reach the target"); lines split by \n
};

/// The study's charts from its table: against each numeric axis (one line per combination of the others, the
/// mode's colour), the time to the target (or the run's time without a target), the final loss, the accuracy
/// (classification), the throughput, the idle fraction and the mean staleness (modes that push); against
/// workers also the speedup (the time at the fewest workers of the line over the time, with the ideal as a
/// dashed line) and the efficiency (speedup x P0 / P); with --best-of, the chosen value. Axes that double (or
/// span more than two decades) are logarithmic. Seeds give each x a band from the smallest to the largest value
/// and a line through the medians.
std::vector<StudyFigure> studyFigures(const StudyTable& table);

} // namespace sgdscope
