#include "core/run/study/StudyFiles.h"

#include "core/common/Error.h"
#include "core/common/MemoryBudget.h"
#include "core/io/Files.h"
#include "core/run/study/StudyTable.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

namespace sgdscope {

namespace {

namespace fs = std::filesystem;

/// The --best-of reduction as study.json records it: per group, every rung's candidates with each seed's
/// final loss (and time to the target), their medians, which went on, and the chosen value.
Json bestOfJson(const StudyState& state)
{
    const StudyPlan& plan = state.plan();
    Json j = Json::object();
    j["name"] = plan.candidates().name;
    j["candidates"] = plan.candidates().values;
    j["measure"] = plan.hasTarget()
        ? "the median over the seeds of the time to the target (not reached: infinite), then of the final training "
          "loss; the lowest wins"
        : "the median over the seeds of the final training loss (diverged: infinite); the lowest wins";
    if (plan.halving().rungs() > 1)
        j["halving"] = Json {{"eta", plan.halving().eta()}, {"rungs", plan.halving().rungs()},
            {"rule",
                "successive halving: every candidate first runs full / eta^(rungs - 1) steps (an ordinary run "
                "with --steps, in a folder of its own); at each rung the best ceil(n / eta^(rung + 1)) candidates "
                "by the measure go on to eta times more steps, until one runs in full"}};
    Json groups = Json::array();
    for (int g = 0; g < plan.groupCount(); ++g) {
        const StudyState::GroupRecord& group = state.group(g);
        Json gj = Json::object();
        Json where = Json::object();
        const std::vector<int> indices = plan.groupIndices(g);
        for (std::size_t a = 0; a < indices.size(); ++a)
            where[plan.axes()[a].name] = plan.axes()[a].values[static_cast<std::size_t>(indices[a])];
        gj["group"] = where;
        gj["chosen"] = group.chosen >= 0 ? Json(plan.candidates().values[static_cast<std::size_t>(group.chosen)])
                                         : Json(nullptr);
        Json rungs = Json::array();
        for (const StudyState::RungRecord& r : group.rungs) {
            Json rj = Json::object();
            rj["rung"] = r.rung;
            rj["settled"] = r.settled;
            Json candidates = Json::array();
            for (std::size_t i = 0; i < r.candidates.size(); ++i) {
                const int c = r.candidates[i];
                Json cj = Json::object();
                cj["value"] = plan.candidates().values[static_cast<std::size_t>(c)];
                cj["steps"] = plan.point(g, c, 0, r.rung).steps;
                Json runs = Json::array();
                for (int s = 0; s < plan.seedCount(); ++s) {
                    for (const PointRecord* record : state.records()) {
                        const StudyPoint& p = record->point;
                        if (p.group != g || p.candidate != c || p.seed != s || p.rung != r.rung)
                            continue;
                        Json run = Json::object();
                        run["point"] = p.id;
                        if (plan.hasSeeds())
                            run["seed"] = plan.seeds().values[static_cast<std::size_t>(s)];
                        run["status"] = statusName(record->status);
                        if (record->result) {
                            run["final_loss"] = std::isfinite(record->result->finalLoss)
                                ? Json(record->result->finalLoss)
                                : Json(nullptr);
                            if (plan.hasTarget())
                                run["seconds_to_target"] = record->result->secondsToTarget >= 0
                                    ? Json(record->result->secondsToTarget)
                                    : Json(nullptr);
                        }
                        runs.push_back(run);
                    }
                }
                cj["runs"] = runs;
                if (r.settled && i < r.scores.size()) {
                    cj["median_final_loss"] = std::isfinite(r.scores[i].loss) ? Json(r.scores[i].loss) : Json(nullptr);
                    if (plan.hasTarget())
                        cj["median_seconds_to_target"]
                            = std::isfinite(r.scores[i].seconds) ? Json(r.scores[i].seconds) : Json(nullptr);
                    cj[plan.halving().lastRung(r.rung) ? "chosen" : "promoted"] = static_cast<bool>(r.promoted[i]);
                }
                candidates.push_back(cj);
            }
            rj["candidates"] = candidates;
            rungs.push_back(rj);
        }
        gj["rungs"] = rungs;
        groups.push_back(gj);
    }
    j["groups"] = groups;
    return j;
}

} // namespace

double studyClock()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void writeStudyFiles(const std::string& dir, const StudyState& state, const StudyMeta& meta, const std::string& status)
{
    StudyTable table = tableOf(state);
    if (status == "interrupted" || status == "incomplete") {
        // Written as the study stops: what still runs is stopping, and will not have finished.
        for (StudyTable::Row& row : table.rows) {
            if (row.status == PointStatus::Running) {
                row.status = PointStatus::Interrupted;
                row.message = "still running when the study stopped";
            }
        }
    }
    std::vector<Json> extras;
    for (const PointRecord* r : state.records()) {
        Json extra = Json::object();
        Json options = Json::array();
        for (const auto& [name, value] : r->point.options)
            options.push_back(Json::array({name, value}));
        extra["options"] = options;
        if (r->reused)
            extra["reused"] = true;
        if (r->wallSeconds >= 0)
            extra["process_seconds"] = r->wallSeconds;
        if (r->startedAt >= 0)
            extra["started_at_seconds"] = r->startedAt;
        if (r->endedAt >= 0)
            extra["ended_at_seconds"] = r->endedAt;
        extras.push_back(std::move(extra));
    }
    Json j = Json::object();
    j["version"] = "sgdscope study 1";
    j["command"] = meta.command;
    std::error_code ec;
    j["working_directory"] = fs::current_path(ec).string();
    j["status"] = status;
    j["identity"] = meta.identity;
    j["points_total"] = state.total();
    j["points_finished"] = state.finishedCount();
    j["points_settled"] = state.settledCount();
    j["notes"] = meta.notes;
    if (!meta.problems.empty())
        j["problems"] = meta.problems;
    const double wall = studyClock() - meta.startedAt;
    const double overhead = std::max(0.0, wall - meta.busySeconds);
    j["timing"] = Json {{"scheduled_on", meta.where}, {"wall_seconds", wall},
        {"points_running_seconds", meta.busySeconds}, {"overhead_seconds", overhead},
        {"overhead_share", wall > 0 ? overhead / wall : 0.0}, {"charts_seconds", meta.chartSeconds},
        {"points_run", meta.ran}, {"points_reused", meta.reused}, {"points_process_seconds", meta.pointSeconds},
        {"note",
            "overhead = wall time with no point running (checking the points, starting and reaping processes, "
            "writing these files, drawing the charts); this session's only (a resumed study counts anew); a point's "
            "started_at_seconds and ended_at_seconds are its process's start and end after this session began"}};
    j["memory"] = Json {{"resident_after_first_point_bytes", meta.residentAfterFirst},
        {"resident_after_last_point_bytes", meta.residentAfterLast}, {"resident_bytes", residentBytes()},
        {"peak_resident_bytes", peakResidentBytes()},
        {"note",
            "the study's own process (the points run in processes of their own): it keeps a small record per point, "
            "so its memory stays flat as points finish"}};
    if (state.plan().hasBestOf())
        j["best_of"] = bestOfJson(state);
    const Json tableMembers = tableJson(table, extras);
    for (const auto& [key, value] : tableMembers.items())
        j[key] = value;
    writeFileAtomically((fs::path(dir) / "results.csv").string(), resultsCsv(table));
    writeFileAtomically((fs::path(dir) / "study.json").string(), dumpJson(j, 2) + "\n");
}

void prepareStudyFolder(const std::string& dir, const Json& identity)
{
    std::error_code ec;
    const fs::path study = fs::path(dir) / "study.json";
    if (fs::exists(study, ec)) {
        Json existing;
        try {
            existing = parseJson(readFile(study.string(), "--study: file", 1ULL << 30), "--study: " + study.string());
        } catch (const SgdError& e) {
            throw SgdError(std::string(e.what()) + "; give another folder");
        }
        Json* was = existing.is_object() && existing.contains("identity") ? &existing["identity"] : nullptr;
        if (was && was->is_object() && was->contains("shared") && (*was)["shared"].is_array()) {
            // A study written before the shared options were kept in name order.
            Json& shared = (*was)["shared"];
            const auto name = [](const Json& option) {
                return option.is_array() && !option.empty() && option[0].is_string() ? option[0].get<std::string>()
                                                                                     : std::string();
            };
            std::stable_sort(
                shared.begin(), shared.end(), [&](const Json& a, const Json& b) { return name(a) < name(b); });
        }
        if (!was || *was != identity) {
            std::string difference = "its command";
            if (was && was->is_object()) {
                for (const auto& [key, value] : identity.items()) {
                    const Json* old = member(*was, key);
                    if (!old || *old != value) {
                        difference = "its " + key + " (" + (old ? dumpJson(*old, -1).substr(0, 120) : "none")
                            + " there, " + dumpJson(value, -1).substr(0, 120) + " here)";
                        break;
                    }
                }
            }
            throw SgdError("--study: '" + dir + "' holds another study: " + difference
                + " differs; give the same command to continue it, or another folder");
        }
    } else if (fs::exists(dir, ec)) {
        if (!fs::is_directory(dir, ec))
            throw SgdError("--study: '" + dir + "' is a file; give a folder");
        if (fs::exists(fs::path(dir) / "summary.json", ec))
            throw SgdError("--study: '" + dir + "' is a run folder (it has summary.json); give a new folder");
        if (!fs::is_empty(dir, ec))
            throw SgdError("--study: '" + dir + "' holds other files and no study.json; give a new or empty folder");
    }
    (void)ensureWritableDirectory((fs::path(dir) / "points").string(), "--study");
}

} // namespace sgdscope
