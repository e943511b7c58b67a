#include "core/run/study/StudyTable.h"

#include "core/common/Error.h"
#include "core/run/Options.h"
#include "core/run/study/StudyState.h"

#include <cmath>

namespace sgdscope {

namespace {

std::string csvField(const std::string& text)
{
    if (text.find_first_of(",\"\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    return quoted + "\"";
}

std::string numberField(double v)
{
    return std::isfinite(v) ? formatNumber(v) : std::string();
}

const Json& required(const Json& object, const char* key, const std::string& what)
{
    const Json* v = member(object, key);
    if (!v)
        throw SgdError(what + ": member \"" + key + "\" is missing");
    return *v;
}

std::string textOf(const Json& object, const char* key)
{
    const Json* v = member(object, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

} // namespace

int StudyTable::axisIndex(const std::string& name) const
{
    for (std::size_t i = 0; i < axes.size(); ++i) {
        if (axes[i].name == name)
            return static_cast<int>(i);
    }
    return -1;
}

StudyTable tableOf(const StudyState& state)
{
    const StudyPlan& plan = state.plan();
    StudyTable t;
    t.axes = plan.axes();
    t.bestOf = plan.hasBestOf() ? plan.candidates().name : std::string();
    t.seeds = plan.hasSeeds();
    t.target = plan.hasTarget();
    for (const PointRecord* r : state.records()) {
        const StudyPoint& p = r->point;
        StudyTable::Row row;
        row.id = p.id;
        const std::vector<int> indices = plan.groupIndices(p.group);
        for (std::size_t a = 0; a < indices.size(); ++a)
            row.values.push_back(plan.axes()[a].values[static_cast<std::size_t>(indices[a])]);
        if (plan.hasBestOf())
            row.candidate = plan.candidates().values[static_cast<std::size_t>(p.candidate)];
        if (plan.hasSeeds())
            row.seed = plan.seeds().values[static_cast<std::size_t>(p.seed)];
        row.rung = p.rung;
        row.fullRun = plan.halving().lastRung(p.rung);
        row.steps = p.steps;
        row.status = r->status;
        row.kept = state.kept(*r);
        row.result = r->result;
        row.message = r->message;
        row.rank = r->rank;
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::string resultsCsv(const StudyTable& t)
{
    std::string out = "point";
    for (const StudyAxis& a : t.axes)
        out += "," + csvField(a.name);
    if (!t.bestOf.empty())
        out += "," + csvField(t.bestOf);
    if (t.seeds)
        out += ",seed";
    // (the run's mode only when it is not an axis: a mode list is one)
    const bool modeColumn = t.axisIndex("mode") < 0;
    out += std::string(",rung,steps,kept,status") + (modeColumn ? ",mode" : "")
        + ",clock,seconds,seconds_to_target,samples_to_target,samples_per_second,"
          "idle_fraction,mean_staleness,final_loss,accuracy,updates,samples,params_digest\n";
    for (const StudyTable::Row& row : t.rows) {
        out += csvField(row.id);
        for (const std::string& v : row.values)
            out += "," + csvField(v);
        if (!t.bestOf.empty())
            out += "," + csvField(row.candidate);
        if (t.seeds)
            out += "," + csvField(row.seed);
        out += "," + std::to_string(row.rung) + "," + std::to_string(row.steps) + "," + (row.kept ? "1" : "0") + ","
            + statusName(row.status);
        if (row.result && isFinished(row.status)) {
            const PointResult& r = *row.result;
            out += (modeColumn ? "," + csvField(r.mode) : std::string()) + "," + r.clock + "," + numberField(r.seconds)
                + "," + (r.secondsToTarget >= 0 ? numberField(r.secondsToTarget) : std::string()) + ","
                + (r.samplesToTarget >= 0 ? std::to_string(r.samplesToTarget) : std::string()) + ","
                + numberField(r.samplesPerSecond) + "," + numberField(r.idleFraction) + ","
                + numberField(r.meanStaleness) + "," + numberField(r.finalLoss) + ","
                + (r.accuracy >= 0 ? numberField(r.accuracy) : std::string()) + "," + std::to_string(r.updates) + ","
                + std::to_string(r.samples) + "," + r.digest;
        } else {
            out += modeColumn ? ",,,,,,,,,,,,," : ",,,,,,,,,,,,";
        }
        out += "\n";
    }
    return out;
}

Json tableJson(const StudyTable& t, const std::vector<Json>& pointExtras)
{
    Json j = Json::object();
    Json axes = Json::array();
    for (const StudyAxis& a : t.axes) {
        Json positions = Json::array();
        for (const double p : a.positions)
            positions.push_back(std::isfinite(p) ? Json(p) : Json(nullptr));
        axes.push_back(Json {{"name", a.name}, {"values", a.values}, {"positions", positions}, {"numeric", a.numeric()},
            {"log_scale", a.logScale()}});
    }
    j["axes"] = axes;
    j["best_of_axis"] = t.bestOf.empty() ? Json(nullptr) : Json(t.bestOf);
    j["seeds_axis"] = t.seeds;
    j["target"] = t.target;
    Json points = Json::array();
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const StudyTable::Row& row = t.rows[i];
        Json p = Json::object();
        p["id"] = row.id;
        p["folder"] = "points/" + row.id;
        Json values = Json::object();
        for (std::size_t a = 0; a < t.axes.size(); ++a)
            values[t.axes[a].name] = row.values[a];
        if (!t.bestOf.empty())
            values[t.bestOf] = row.candidate;
        if (t.seeds)
            values["seed"] = row.seed;
        p["values"] = values;
        p["rung"] = row.rung;
        p["full_run"] = row.fullRun;
        p["steps"] = row.steps;
        p["status"] = statusName(row.status);
        p["kept"] = row.kept;
        if (row.result)
            p["results"] = row.result->toJson();
        if (!row.message.empty())
            p["message"] = row.message;
        if (row.rank >= 0)
            p["rank"] = row.rank;
        if (i < pointExtras.size() && pointExtras[i].is_object()) {
            for (const auto& [key, value] : pointExtras[i].items())
                p[key] = value;
        }
        points.push_back(std::move(p));
    }
    j["points"] = points;
    return j;
}

StudyTable readTable(const Json& study, const std::string& what)
{
    StudyTable t;
    const Json& axes = required(study, "axes", what);
    if (!axes.is_array())
        throw SgdError(what + ": \"axes\" is not an array");
    for (const Json& a : axes) {
        StudyAxis axis;
        axis.name = textOf(a, "name");
        for (const Json& v : required(a, "values", what))
            axis.values.push_back(v.is_string() ? v.get<std::string>() : dumpJson(v, -1));
        for (const Json& p : required(a, "positions", what))
            axis.positions.push_back(p.is_number() ? p.get<double>() : std::nan(""));
        if (axis.positions.size() != axis.values.size())
            throw SgdError(what + ": axis \"" + axis.name + "\" has " + std::to_string(axis.values.size())
                + " values but " + std::to_string(axis.positions.size()) + " positions");
        t.axes.push_back(std::move(axis));
    }
    if (const Json* b = member(study, "best_of_axis"); b && b->is_string())
        t.bestOf = b->get<std::string>();
    if (const Json* s = member(study, "seeds_axis"); s && s->is_boolean())
        t.seeds = s->get<bool>();
    if (const Json* s = member(study, "target"); s && s->is_boolean())
        t.target = s->get<bool>();
    const Json& points = required(study, "points", what);
    if (!points.is_array())
        throw SgdError(what + ": \"points\" is not an array");
    for (const Json& p : points) {
        StudyTable::Row row;
        row.id = textOf(p, "id");
        const Json& values = required(p, "values", what);
        for (const StudyAxis& a : t.axes)
            row.values.push_back(textOf(values, a.name.c_str()));
        if (!t.bestOf.empty())
            row.candidate = textOf(values, t.bestOf.c_str());
        if (t.seeds)
            row.seed = textOf(values, "seed");
        if (const Json* v = member(p, "rung"); v && v->is_number_integer())
            row.rung = v->get<int>();
        if (const Json* v = member(p, "full_run"); v && v->is_boolean())
            row.fullRun = v->get<bool>();
        if (const Json* v = member(p, "steps"); v && v->is_number())
            row.steps = static_cast<std::int64_t>(v->get<double>());
        row.status = statusNamed(textOf(p, "status")).value_or(PointStatus::Pending);
        if (const Json* v = member(p, "kept"); v && v->is_boolean())
            row.kept = v->get<bool>();
        if (const Json* r = member(p, "results"); r && r->is_object())
            row.result = PointResult::fromJson(*r);
        row.message = textOf(p, "message");
        if (const Json* v = member(p, "rank"); v && v->is_number_integer())
            row.rank = v->get<int>();
        t.rows.push_back(std::move(row));
    }
    return t;
}

} // namespace sgdscope
