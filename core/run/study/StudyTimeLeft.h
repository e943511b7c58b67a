#pragma once

namespace sgdscope {

/// How long a study has left, from the points it ran. A point's process costs a part that does not grow with its
/// steps (starting the process, making its data, its final evaluation, its charts: the process's seconds less
/// its training's) and its training, which does. With --halving the first rung's points are the shortest, so
/// neither seconds per point (low: later points are longer) nor seconds per step (high: the fixed part counted
/// again for every step) alone says what the rest will take; the two parts measured apart do.
class StudyTimeLeft
{
public:
    /// A point that ran to a result: its process's seconds, its training's (summary.json's wall-clock seconds),
    /// its steps.
    void ran(double processSeconds, double trainingSeconds, double steps);
    /// The seconds `pointsLeft` points of `stepsLeft` steps in all take, `together` at a time; < 0 before any
    /// point ran to a result.
    double seconds(double pointsLeft, double stepsLeft, int together) const;

private:
    int m_points = 0;
    double m_fixedSeconds = 0.0;
    double m_trainingSeconds = 0.0;
    double m_steps = 0.0;
};

} // namespace sgdscope
