#pragma once

#include "ui/SessionData.h"

#include "core/metrics/EvenlyThinned.h"

#include <QList>
#include <QPointF>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace sgdscope::ui {

enum class XAxisKind
{
    Updates,
    Samples,
    Seconds
};

/// A per-update figure the trend charts average over time.
enum class TrendValue
{
    Staleness,
    WaitSeconds
};

/// One mode's curves on the GUI side, in bounded memory: at most `capacity` update points (32,768 by
/// default: 16 or more per pixel column of a 2000-pixel chart; when full, every
/// other point is dropped, so an hour-long run keeps an evenly thinned curve), all evaluations (also
/// thinned past the capacity), the markers, and the workers' time bins of the last few seconds. A
/// non-finite batch loss (divergence) is not stored: the curve ends at its last finite point, where the
/// charts mark the divergence.
class ModeSeries
{
public:
    explicit ModeSeries(std::size_t capacity = 1 << 15);

    void add(const MetricsBatch& batch, int mode);
    void clear();
    /// The smoothing weight of smoothedLog (TensorBoard's: weight^gap per update between stored points,
    /// so a thinned store smooths like the full one). Kept up to date as points arrive; a new weight
    /// recomputes the stored points once.
    void setSmoothing(double weight);
    double smoothing() const { return m_smoothing; }

    const std::vector<LossPoint>& points() const { return m_points.items(); }
    const std::vector<EvalPoint>& evals() const { return m_evals.items(); }
    const std::vector<Marker>& markers() const { return m_markers; }
    const std::vector<TimeBin>& timeline() const { return m_timeline; }
    const ModeStatus& status() const { return m_status; }
    std::int64_t received() const { return m_received; }
    /// Keep timeline bins within this many seconds of the newest (the timeline's window).
    static constexpr double timelineSeconds = 3.0;

private:
    EvenlyThinned<LossPoint> m_points;
    EvenlyThinned<EvalPoint> m_evals;
    std::vector<Marker> m_markers;
    std::vector<TimeBin> m_timeline;
    ModeStatus m_status;
    std::int64_t m_received = 0;
    double m_smoothing = 0.9;
    double m_ema = 0.0;
    double m_debias = 0.0;
    std::int64_t m_lastIndex = -1;
};

double xOf(const LossPoint& p, XAxisKind kind);
double xOf(const EvalPoint& p, XAxisKind kind);
double xOf(const Marker& m, XAxisKind kind);

/// Min and max of the loss in each of `columns` pixel columns over [x0, x1], in x order: what a line of
/// that many pixels can show, whatever the number of points (log-safe: values below 1e-12 are clamped).
QList<QPointF> decimateMinMax(const std::vector<LossPoint>& points, XAxisKind kind, double x0, double x1, int columns);

/// The stored smoothing (ModeSeries::setSmoothing), one point per pixel column.
QList<QPointF> smoothed(const std::vector<LossPoint>& points, XAxisKind kind, double x0, double x1, int columns);

/// The mean of `value` per pixel column over [x0, x1] (x = the mode's seconds).
QList<QPointF> meanTrend(const std::vector<LossPoint>& points, TrendValue value, double x0, double x1, int columns);

/// Bars for a staleness histogram, at most `maxBars` bars (at least 4). When the staleness seen fits, one bar per
/// value from 0: 0, 1, 2, ... (a tail beyond the bars counted in the last one, "N+"). Otherwise the bars follow the
/// range seen: from the smallest staleness to the largest, in bins of an equal, round width (1, 2 or 5 times a power
/// of ten), labelled by their range ("240-249"). The few pushes past the 99.5th percentile (a preempted worker's push,
/// hundreds of updates stale beside pushes of 0 or 1) do not stretch the bins: they are counted in a last bar "N+".
/// `tailFolded`: counts' own last entry is already "s or more".
std::pair<QStringList, std::vector<std::int64_t>> stalenessBars(
    const std::vector<std::int64_t>& counts, bool tailFolded, int maxBars);

/// Bars for sync's wait per update by decade (ModeStatus::waitDecades), from the first to the last decade
/// that holds an update, at least 4 bars, labelled by their lower edge in seconds with an SI prefix: "<1µ",
/// "1µ", "10µ", "100µ", "1m", ..., "1", "10".
std::pair<QStringList, std::vector<std::int64_t>> waitBars(const std::vector<std::int64_t>& decades);

} // namespace sgdscope::ui
