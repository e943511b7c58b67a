#pragma once
// How the control panel's sliders map their positions to values (ControlPanel's files only): the learning rate
// on a log scale, the straggler's factor and the jitter in fixed steps.

#include "ui/Controller.h"

#include <cmath>

namespace sgdscope::ui {

constexpr int lrStepsPerDecade = 20;
constexpr double jitterStep = 0.05;
constexpr double slowStep = 0.5;

// The sliders' ranges come from the option table (Controller::windowRange).
inline double lrMin()
{
    return Controller::windowRange("lr").first; // slider 0
}
inline int lrSteps()
{
    const auto [low, high] = Controller::windowRange("lr");
    return static_cast<int>(std::lround(std::log10(high / low) * lrStepsPerDecade));
}
inline double lrFromSlider(int v)
{
    return lrMin() * std::pow(10.0, static_cast<double>(v) / lrStepsPerDecade);
}
inline int sliderFromLr(double lr)
{
    return static_cast<int>(std::lround(std::log10(lr / lrMin()) * lrStepsPerDecade));
}
inline int slowSteps(double factor)
{
    return static_cast<int>(std::lround(factor / slowStep));
}
inline int jitterSteps(double sigma)
{
    return static_cast<int>(std::lround(sigma / jitterStep));
}

} // namespace sgdscope::ui
