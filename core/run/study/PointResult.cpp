#include "core/run/study/PointResult.h"

#include "core/io/Files.h"

#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

namespace sgdscope {

namespace {

constexpr std::array<std::pair<PointStatus, const char*>, 9> statusNames {
    {{PointStatus::Pending, "pending"}, {PointStatus::Running, "running"}, {PointStatus::Done, "done"},
        {PointStatus::Diverged, "diverged"}, {PointStatus::Failed, "failed"}, {PointStatus::Refused, "refused"},
        {PointStatus::Interrupted, "interrupted"}, {PointStatus::Lost, "lost"}, {PointStatus::Skipped, "skipped"}}};

double numberOr(const Json& object, const char* key, double fallback)
{
    const Json* v = member(object, key);
    return v && v->is_number() ? v->get<double>() : fallback;
}

std::int64_t integerOr(const Json& object, const char* key, std::int64_t fallback)
{
    const Json* v = member(object, key);
    return v && v->is_number() ? static_cast<std::int64_t>(v->get<double>()) : fallback;
}

std::string textOr(const Json& object, const char* key)
{
    const Json* v = member(object, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

bool flag(const Json& object, const char* key)
{
    const Json* v = member(object, key);
    return v && v->is_boolean() && v->get<bool>();
}

Json finiteOrNull(double v)
{
    return std::isfinite(v) ? Json(v) : Json(nullptr);
}

} // namespace

const char* statusName(PointStatus status)
{
    for (const auto& [s, name] : statusNames) {
        if (s == status)
            return name;
    }
    return "pending";
}

std::optional<PointStatus> statusNamed(const std::string& name)
{
    for (const auto& [s, n] : statusNames) {
        if (name == n)
            return s;
    }
    return std::nullopt;
}

Json PointResult::toJson() const
{
    Json j = Json::object();
    j["mode"] = mode;
    j["clock"] = clock;
    j["seconds"] = seconds;
    if (targetSet) {
        j["seconds_to_target"] = secondsToTarget >= 0 ? Json(secondsToTarget) : Json(nullptr);
        j["samples_to_target"] = samplesToTarget >= 0 ? Json(samplesToTarget) : Json(nullptr);
    }
    j["samples_per_second"] = samplesPerSecond;
    j["idle_fraction"] = idleFraction;
    j["mean_staleness"] = meanStaleness;
    j["final_loss"] = finiteOrNull(finalLoss);
    j["accuracy"] = accuracy >= 0 ? Json(accuracy) : Json(nullptr);
    j["updates"] = updates;
    j["samples"] = samples;
    j["diverged"] = diverged;
    j["params_digest"] = digest;
    j["wall_clock_seconds"] = wallClockSeconds;
    return j;
}

PointResult PointResult::fromJson(const Json& j)
{
    PointResult r;
    r.mode = textOr(j, "mode");
    r.clock = textOr(j, "clock");
    r.seconds = numberOr(j, "seconds", 0.0);
    r.targetSet = member(j, "seconds_to_target") != nullptr;
    r.secondsToTarget = numberOr(j, "seconds_to_target", -1.0);
    r.samplesToTarget = integerOr(j, "samples_to_target", -1);
    r.samplesPerSecond = numberOr(j, "samples_per_second", 0.0);
    r.idleFraction = numberOr(j, "idle_fraction", 0.0);
    r.meanStaleness = numberOr(j, "mean_staleness", 0.0);
    r.finalLoss = numberOr(j, "final_loss", std::numeric_limits<double>::quiet_NaN());
    r.accuracy = numberOr(j, "accuracy", -1.0);
    r.updates = integerOr(j, "updates", 0);
    r.samples = integerOr(j, "samples", 0);
    r.diverged = flag(j, "diverged");
    r.digest = textOr(j, "params_digest");
    r.wallClockSeconds = numberOr(j, "wall_clock_seconds", 0.0);
    return r;
}

std::optional<PointResult> readFinishedPoint(const std::string& folder)
{
    const std::string path = (std::filesystem::path(folder) / "summary.json").string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return std::nullopt;
    try {
        const Json summary = parseJson(readFile(path, "summary", 256ULL << 20), path);
        if (flag(summary, "interrupted") || flag(summary, "failed") || member(summary, "written_after_this_file"))
            return std::nullopt;
        const Json* runs = member(summary, "runs");
        if (!runs || !runs->is_array() || runs->size() != 1 || !(*runs)[0].is_object())
            return std::nullopt;
        const Json& run = (*runs)[0];
        if (flag(run, "interrupted") || flag(run, "failed"))
            return std::nullopt;
        PointResult r;
        r.mode = textOr(run, "mode");
        r.clock = textOr(run, "clock");
        r.seconds = numberOr(run, "seconds", 0.0);
        r.targetSet = member(run, "target") != nullptr;
        r.secondsToTarget = numberOr(run, "seconds_to_target", -1.0);
        r.samplesToTarget = integerOr(run, "samples_to_target", -1);
        r.samplesPerSecond = numberOr(run, "samples_per_second", 0.0);
        r.idleFraction = numberOr(run, "idle_fraction", 0.0);
        if (const Json* staleness = member(run, "staleness"))
            r.meanStaleness = numberOr(*staleness, "mean", 0.0);
        r.finalLoss = numberOr(run, "final_loss", std::numeric_limits<double>::quiet_NaN());
        r.accuracy = numberOr(run, "test_accuracy", numberOr(run, "train_accuracy", -1.0));
        r.updates = integerOr(run, "updates", 0);
        r.samples = integerOr(run, "samples", 0);
        r.diverged = flag(run, "diverged");
        r.digest = textOr(run, "params_digest");
        r.wallClockSeconds = numberOr(run, "wall_clock_seconds", 0.0);
        return r;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace sgdscope
