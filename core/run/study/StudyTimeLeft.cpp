#include "core/run/study/StudyTimeLeft.h"

#include <algorithm>

namespace sgdscope {

void StudyTimeLeft::ran(double processSeconds, double trainingSeconds, double steps)
{
    if (!(processSeconds >= 0) || !(steps > 0))
        return;
    const double training = std::clamp(trainingSeconds >= 0 ? trainingSeconds : 0.0, 0.0, processSeconds);
    ++m_points;
    m_fixedSeconds += processSeconds - training;
    m_trainingSeconds += training;
    m_steps += steps;
}

double StudyTimeLeft::seconds(double pointsLeft, double stepsLeft, int together) const
{
    if (m_points == 0)
        return -1.0;
    const double perPoint = m_fixedSeconds / m_points;
    const double perStep = m_trainingSeconds / m_steps;
    return (std::max(0.0, pointsLeft) * perPoint + std::max(0.0, stepsLeft) * perStep) / std::max(1, together);
}

} // namespace sgdscope
