#include "core/run/study/StudyFigures.h"

#include "core/common/Json.h"
#include "core/metrics/Events.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace sgdscope {

namespace {

/// What a chart shows of a run (NaN: the run has no such value, e.g. a target not reached).
using Measure = std::function<double(const PointResult&)>;
/// What a chart shows of a point of the table (its chosen candidate, for one).
using RowMeasure = std::function<double(const StudyTable::Row&)>;

double nan()
{
    return std::nan("");
}

/// A line's runs at one x: (value, folder).
using Runs = std::vector<std::pair<double, std::string>>;

/// The first three of `items` for a chart's note, "; "-separated, and how many more.
std::string firstFew(const std::vector<std::string>& items)
{
    std::string text;
    for (std::size_t i = 0; i < items.size() && i < 3; ++i)
        text += (i == 0 ? "" : "; ") + items[i];
    return text + (items.size() > 3 ? "; " + std::to_string(items.size() - 3) + " more" : "");
}

/// What a run without a value stands for in its point's median and band.
enum class Missing
{
    Left, // nothing (an accuracy that was not measured): the point is made of the runs that have one
    // The worst of all: it counts in the median, which is then no better than the runs that have a value, and none
    // where at least half of them have none.
    NotReached, // a target never reached
    Diverged, // a loss that diverged
};

/// The point of `runs` at x (values +infinity: runs that count as the worst, at the top of the order); its band
/// spans the runs with a value.
FigurePoint bandOf(double x, Runs runs, const std::string& where)
{
    std::sort(runs.begin(), runs.end());
    FigurePoint p;
    p.x = x;
    p.where = where;
    const std::size_t n = runs.size();
    p.median = n % 2 == 1 ? runs[n / 2].first : 0.5 * (runs[n / 2 - 1].first + runs[n / 2].first);
    std::size_t valued = n;
    while (valued > 0 && std::isinf(runs[valued - 1].first))
        --valued;
    p.low = valued > 0 ? runs.front().first : INFINITY;
    p.high = valued > 0 ? runs[valued - 1].first : INFINITY;
    p.withoutValue = static_cast<int>(n - valued);
    // The median's run first (the one a click opens), then the others.
    const std::size_t mid = (n - 1) / 2;
    p.folders.push_back("points/" + runs[mid].second);
    p.points.push_back(runs[mid].second);
    for (std::size_t i = 0; i < n; ++i) {
        if (i != mid) {
            p.folders.push_back("points/" + runs[i].second);
            p.points.push_back(runs[i].second);
        }
    }
    return p;
}

bool syncLikeName(const std::string& mode)
{
    const auto m = valueNamed(modeNames, mode);
    return m && isSyncLike(*m);
}

/// The kept, finished rows grouped into lines against axis `ax`: per line, per x position, the rows.
struct LineRows
{
    std::string name;
    std::string mode;
    std::map<double, std::vector<const StudyTable::Row*>> byX;
};

std::vector<LineRows> linesAgainst(const StudyTable& t, int ax)
{
    std::vector<LineRows> lines;
    std::map<std::vector<std::string>, std::size_t> index;
    const int modeAxis = t.axisIndex("mode");
    for (const StudyTable::Row& row : t.rows) {
        if (!row.kept || !row.result || !isFinished(row.status))
            continue;
        std::vector<std::string> key;
        std::string name;
        for (std::size_t a = 0; a < t.axes.size(); ++a) {
            if (static_cast<int>(a) == ax)
                continue;
            key.push_back(row.values[a]);
            const std::string part
                = static_cast<int>(a) == modeAxis ? row.values[a] : t.axes[a].name + "=" + row.values[a];
            name += (name.empty() ? "" : " · ") + part;
        }
        auto [it, added] = index.emplace(key, lines.size());
        if (added) {
            LineRows line;
            line.name = name.empty() ? row.result->mode : name;
            line.mode = modeAxis >= 0 ? row.values[static_cast<std::size_t>(modeAxis)] : row.result->mode;
            lines.push_back(std::move(line));
        }
        const int vi = t.axes[static_cast<std::size_t>(ax)].indexOf(row.values[static_cast<std::size_t>(ax)]);
        if (vi < 0)
            continue;
        lines[it->second].byX[t.axes[static_cast<std::size_t>(ax)].positions[static_cast<std::size_t>(vi)]].push_back(
            &row);
    }
    return lines;
}

std::string whereOf(const StudyTable& t, const StudyTable::Row& row)
{
    std::string w;
    for (std::size_t a = 0; a < t.axes.size(); ++a)
        w += (w.empty() ? "" : ", ") + t.axes[a].name + "=" + row.values[a];
    return w;
}

void setVariants(std::vector<FigureLine>& lines)
{
    std::map<std::string, int> perMode;
    for (FigureLine& l : lines) {
        if (!l.reference)
            l.variant = perMode[l.mode]++;
    }
}

bool wideRange(const std::vector<FigureLine>& lines)
{
    double low = INFINITY;
    double high = 0.0;
    for (const FigureLine& l : lines) {
        for (const FigurePoint& p : l.points) {
            if (!(p.low > 0.0))
                return false;
            low = std::min(low, p.low);
            high = std::max(high, p.high);
        }
    }
    return high > 20.0 * low;
}

/// A figure of `measure` against axis `ax`; empty lines are left out.
StudyFigure figureOf(const StudyTable& t, int ax, const std::string& stem, const std::string& title,
    const std::string& yTitle, const RowMeasure& measure, bool logYIfWide, bool fromZero, Missing ifMissing,
    const std::function<bool(const LineRows&)>& lineFilter = {})
{
    const StudyAxis& axis = t.axes[static_cast<std::size_t>(ax)];
    StudyFigure f;
    f.file = stem + "-vs-" + axis.name + ".png";
    f.title = title + " against " + axis.name;
    f.xTitle = axis.name;
    f.yTitle = yTitle;
    f.logX = axis.logScale();
    f.logXBase = axis.logBase();
    f.fromZero = fromZero;
    int missing = 0;
    std::vector<std::string> unplotted; // points whose median has no value: where, "k of n"
    std::vector<std::string> partial; // points drawn though some of their runs have no value
    bool bands = false;
    for (const LineRows& rows : linesAgainst(t, ax)) {
        if (lineFilter && !lineFilter(rows))
            continue;
        FigureLine line;
        line.name = rows.name;
        line.mode = rows.mode;
        for (const auto& [x, list] : rows.byX) {
            Runs runs;
            int without = 0;
            for (const StudyTable::Row* row : list) {
                const double v = measure(*row);
                if (std::isfinite(v)) {
                    runs.emplace_back(v, row->id);
                } else {
                    ++without;
                    if (ifMissing != Missing::Left)
                        runs.emplace_back(INFINITY, row->id);
                }
            }
            missing += without;
            if (runs.empty())
                continue;
            FigurePoint point = bandOf(x, std::move(runs), whereOf(t, *list.front()));
            const std::string count
                = point.where + ": " + std::to_string(without) + " of " + std::to_string(list.size());
            if (!std::isfinite(point.median)) {
                unplotted.push_back(count);
                continue;
            }
            if (without > 0 && ifMissing != Missing::Left)
                partial.push_back(count);
            bands = bands || point.folders.size() > 1;
            line.points.push_back(std::move(point));
        }
        if (!line.points.empty())
            f.lines.push_back(std::move(line));
    }
    setVariants(f.lines);
    f.logY = logYIfWide && wideRange(f.lines);
    if (bands)
        f.note = "band: smallest to largest over the seeds; line: their median";
    if (missing > 0) {
        const std::string why = ifMissing == Missing::NotReached ? "did not reach the target" : "diverged";
        std::string said;
        if (ifMissing != Missing::Left) {
            // (a median of the lucky seeds alone would draw a point where most runs never got there)
            said = std::to_string(missing) + " run" + (missing == 1 ? "" : "s") + " " + why;
            if (!partial.empty())
                said += ", each the worst in its point's median and outside its band (" + firstFew(partial) + ")";
            if (!unplotted.empty())
                said += "\nno point where half or more " + why + " (" + firstFew(unplotted) + ")";
        } else {
            said = std::to_string(missing) + " run" + (missing == 1 ? " has" : "s have") + " no value here";
        }
        // (its own line: the chart draws a note's lines under the title)
        f.note += std::string(f.note.empty() ? "" : "\n") + said;
    }
    return f;
}

/// A figure of a run's `measure` (figureOf over the rows' results).
StudyFigure figureOf(const StudyTable& t, int ax, const std::string& stem, const std::string& title,
    const std::string& yTitle, const Measure& measure, bool logYIfWide, bool fromZero, Missing ifMissing,
    const std::function<bool(const LineRows&)>& lineFilter = {})
{
    return figureOf(
        t, ax, stem, title, yTitle, [&measure](const StudyTable::Row& row) { return measure(*row.result); }, logYIfWide,
        fromZero, ifMissing, lineFilter);
}

/// The candidate a point stands for as a number (NaN: not a number, e.g. a choice).
double candidateValue(const StudyTable::Row& row)
{
    char* end = nullptr;
    const double v = std::strtod(row.candidate.c_str(), &end);
    return end && *end == '\0' && end != row.candidate.c_str() && std::isfinite(v) ? v : nan();
}

/// The kept candidates that are the grid's smallest or largest ("" if none): the best may lie beyond them, and "each
/// at its own best" then holds only within the grid.
std::string choicesOnTheEdge(const StudyTable& t, int ax)
{
    double smallest = INFINITY;
    double largest = -INFINITY;
    for (const StudyTable::Row& row : t.rows) {
        if (const double v = candidateValue(row); std::isfinite(v)) {
            smallest = std::min(smallest, v);
            largest = std::max(largest, v);
        }
    }
    if (!(largest > smallest))
        return {};
    std::vector<std::string> lines;
    for (const LineRows& rows : linesAgainst(t, ax)) {
        for (const auto& [x, list] : rows.byX) {
            const double v = candidateValue(*list.front()); // (the kept rows of a point share their candidate)
            if (v == smallest || v == largest)
                lines.push_back(whereOf(t, *list.front()) + ": " + list.front()->candidate
                    + (v == smallest ? " (the smallest)" : " (the largest)"));
        }
    }
    if (lines.empty())
        return {};
    return "on the grid's edge, a better " + t.bestOf + " may lie beyond it: " + firstFew(lines);
}

} // namespace

std::vector<StudyFigure> studyFigures(const StudyTable& t)
{
    std::vector<StudyFigure> figures;
    bool virtualClock = false;
    bool accuracy = false;
    bool pushing = false;
    for (const StudyTable::Row& row : t.rows) {
        if (!row.result || !row.kept)
            continue;
        virtualClock = virtualClock || row.result->clock == "virtual";
        accuracy = accuracy || row.result->accuracy >= 0;
        pushing = pushing || !syncLikeName(row.result->mode);
    }
    const std::string seconds = virtualClock ? "virtual seconds" : "seconds";
    // (a run that diverged stopped early: its short time is no speed, so it has none)
    const Measure time = [&t](const PointResult& r) {
        if (t.target)
            return r.secondsToTarget >= 0 ? r.secondsToTarget : nan();
        return r.diverged ? nan() : r.seconds;
    };
    const Missing timeMissing = t.target ? Missing::NotReached : Missing::Diverged;
    auto add = [&](StudyFigure f) {
        if (!f.lines.empty())
            figures.push_back(std::move(f));
    };
    for (std::size_t a = 0; a < t.axes.size(); ++a) {
        const StudyAxis& axis = t.axes[a];
        if (!axis.numeric())
            continue;
        const int ax = static_cast<int>(a);
        add(figureOf(t, ax, t.target ? "time-to-target" : "time", t.target ? "Time to target" : "Time of the run",
            t.target ? seconds + " to the target" : seconds, time, true, false, timeMissing));
        if (axis.name == "workers") {
            // Speedup and efficiency: each line against its own run at the fewest workers.
            // (short axis titles, the definitions in the note: a chart in the study's window is a quarter of it)
            StudyFigure speedup = figureOf(t, ax, "speedup", "Speedup", "speedup", time, false, false, timeMissing);
            StudyFigure efficiency
                = figureOf(t, ax, "efficiency", "Efficiency", "efficiency", time, false, true, timeMissing);
            speedup.note = "time at the fewest workers / time" + (speedup.note.empty() ? "" : "; " + speedup.note);
            efficiency.note
                = "speedup x fewest workers / workers" + (efficiency.note.empty() ? "" : "; " + efficiency.note);
            double x0 = INFINITY;
            double xMax = 0.0;
            for (StudyFigure* f : {&speedup, &efficiency}) {
                for (FigureLine& line : f->lines) {
                    const FigurePoint base = line.points.front();
                    for (FigurePoint& p : line.points) {
                        // (a band of ratios: the base's median over this x's largest and smallest)
                        const double low = base.median / p.high;
                        const double median = base.median / p.median;
                        const double high = base.median / p.low;
                        const double scale = f == &efficiency ? base.x / p.x : 1.0;
                        p.low = low * scale;
                        p.median = median * scale;
                        p.high = high * scale;
                        x0 = std::min(x0, base.x);
                        xMax = std::max(xMax, p.x);
                    }
                }
            }
            if (!speedup.lines.empty() && xMax > x0) {
                std::vector<double> xs;
                for (const FigureLine& line : speedup.lines) {
                    for (const FigurePoint& p : line.points)
                        xs.push_back(p.x);
                }
                std::sort(xs.begin(), xs.end());
                xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
                FigureLine ideal;
                ideal.name = "ideal";
                ideal.reference = true;
                for (const double x : xs) {
                    FigurePoint p;
                    p.x = x;
                    p.low = p.median = p.high = x / x0;
                    ideal.points.push_back(p);
                }
                speedup.lines.push_back(ideal);
                speedup.logY = speedup.logX;
            }
            // A line that cannot start at the fewest workers (backup needs two), or whose point there has no median,
            // is over its own first point: say so on the picture, or its lower curve reads as a slower mode.
            const double fewest = *std::min_element(axis.positions.begin(), axis.positions.end());
            for (StudyFigure* f : {&speedup, &efficiency}) {
                for (const FigureLine& line : f->lines) {
                    if (!line.reference && !line.points.empty() && line.points.front().x > fewest)
                        f->note += std::string(f->note.empty() ? "" : "; ") + line.name + ": against its own time at "
                            + formatNumber(line.points.front().x) + " " + axis.name;
                }
            }
            add(std::move(speedup));
            add(std::move(efficiency));
        }
        add(figureOf(
            t, ax, "final-loss", "Final training loss", "final training loss",
            [](const PointResult& r) { return r.finalLoss; }, true, false, Missing::Diverged));
        if (accuracy)
            add(figureOf(
                t, ax, "accuracy", "Final accuracy", "test accuracy (training accuracy without a test set)",
                [](const PointResult& r) { return r.accuracy >= 0 ? r.accuracy : nan(); }, false, false,
                Missing::Left));
        add(figureOf(
            t, ax, "throughput", "Throughput", "samples per " + std::string(virtualClock ? "virtual " : "") + "second",
            [](const PointResult& r) { return r.samplesPerSecond; }, true, false, Missing::Left));
        add(figureOf(
            t, ax, "idle", "Idle fraction", "idle fraction (all workers' waits / wall time)",
            [](const PointResult& r) { return r.idleFraction; }, false, true, Missing::Left));
        if (!t.bestOf.empty()) {
            // The --best-of choice itself, so that "each at its own best" can be read off (and checked against
            // study.json's rungs): the kept candidate per line, a log axis where the grid is one.
            StudyFigure chosen = figureOf(t, ax, "best-" + t.bestOf, "Chosen " + t.bestOf,
                t.bestOf + " kept (best of the candidates)", RowMeasure(candidateValue), true, true, Missing::Left);
            if (!chosen.lines.empty()) {
                // (a log axis only where the kept values span more than a factor 20: it labels whole decades, and
                // 0.2 ... 0.8 has none inside)
                chosen.note = std::string("kept: the candidate with the ")
                    + (t.target ? "shortest time to the target" : "lowest final loss")
                    + "; study.json's best_of has every rung";
                if (const std::string edge = choicesOnTheEdge(t, ax); !edge.empty())
                    chosen.note += "\n" + edge;
                add(std::move(chosen));
            }
        }
        if (pushing)
            add(figureOf(
                t, ax, "staleness", "Mean staleness", "mean staleness (updates)",
                [](const PointResult& r) { return r.meanStaleness; }, false, true, Missing::Left,
                [](const LineRows& rows) { return !syncLikeName(rows.mode); }));
    }
    return figures;
}

} // namespace sgdscope
