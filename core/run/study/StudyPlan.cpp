#include "core/run/study/StudyPlan.h"

#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/Experiment.h"
#include "core/run/Options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>

namespace sgdscope {

namespace {

constexpr int maxPoints = 100000;
/// --best-of NAME alone: the shared value times 2^k, k = -3 ... 3 (a log grid of 7 candidates, a factor 64 wide).
constexpr int defaultGridHalfWidth = 3;

using Options = StudySpec::Options;

void removeOption(Options& options, const std::string& name)
{
    options.erase(
        std::remove_if(options.begin(), options.end(), [&](const auto& o) { return o.first == name; }), options.end());
}

/// The data a configuration loads, as a key: points that share it share one load while they are checked.
std::string dataKey(const RunConfig& c)
{
    Json key = Json::array(
        {toString(c.dataset), c.data, c.samples, static_cast<int>(c.loss), static_cast<int>(c.csvHeader), c.targets});
    if (c.dataset == DatasetKind::Blobs)
        key.push_back(c.seed); // drawn from the seed
    return dumpJson(key, -1);
}

std::string numberText(double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.12g", v);
    return formatNumber(std::strtod(buffer, nullptr));
}

/// An axis with one empty value: a study without --best-of or seeds has one candidate and one seed.
StudyAxis singleAxis(const std::string& name)
{
    StudyAxis a;
    a.name = name;
    a.values = {""};
    a.positions = {std::nan("")};
    return a;
}

} // namespace

std::string pointFolderName(const std::vector<std::pair<std::string, std::string>>& parts)
{
    std::string name;
    for (const auto& [key, value] : parts) {
        if (!name.empty())
            name += '_';
        name += key + "-" + value;
    }
    for (char& ch : name) {
        const bool keep
            = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '+' || ch == '-' || ch == '_';
        if (!keep)
            ch = ch == ':' ? 'x' : '_';
    }
    if (name.empty())
        name = "point";
    if (name.size() > 180)
        name = name.substr(0, 180);
    return name;
}

std::vector<int> StudyPlan::groupIndices(int group) const
{
    std::vector<int> indices(m_axes.size(), 0);
    for (std::size_t a = m_axes.size(); a-- > 0;) {
        const int n = static_cast<int>(m_axes[a].values.size());
        indices[a] = group % n;
        group /= n;
    }
    return indices;
}

std::string StudyPlan::describeGroup(int group) const
{
    const std::vector<int> indices = groupIndices(group);
    std::string text;
    for (std::size_t a = 0; a < m_axes.size(); ++a)
        text += (text.empty() ? "" : ", ") + m_axes[a].name + "="
            + m_axes[a].values[static_cast<std::size_t>(indices[a])];
    return text;
}

std::string StudyPlan::describe(const StudyPoint& p) const
{
    std::string text = describeGroup(p.group);
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (hasBestOf())
        add(m_candidates.name + "=" + m_candidates.values[static_cast<std::size_t>(p.candidate)]);
    if (m_seedsSwept)
        add("seed=" + m_seeds.values[static_cast<std::size_t>(p.seed)]);
    if (!m_halving.lastRung(p.rung))
        add(std::to_string(p.steps) + " steps (rung " + std::to_string(p.rung + 1) + " of "
            + std::to_string(m_halving.rungs()) + ")");
    return text.empty() ? "the only point" : text;
}

const StudyPoint& StudyPlan::fullPoint(int group, int candidate, int seed) const
{
    const std::size_t index = (static_cast<std::size_t>(group) * static_cast<std::size_t>(candidateCount())
                                  + static_cast<std::size_t>(candidate))
            * static_cast<std::size_t>(seedCount())
        + static_cast<std::size_t>(seed);
    return m_points.at(index);
}

StudyPoint StudyPlan::point(int group, int candidate, int seed, int rung) const
{
    StudyPoint p = fullPoint(group, candidate, seed);
    p.rung = rung;
    if (m_halving.lastRung(rung))
        return p;
    p.steps = m_halving.budget(rung, p.steps);
    removeOption(p.options, "steps");
    removeOption(p.options, "epochs");
    p.options.emplace_back("steps", std::to_string(p.steps));
    p.id += "_steps-" + std::to_string(p.steps);
    return p;
}

double StudyPlan::plannedRuns(bool bySteps) const
{
    double total = 0.0;
    for (int g = 0; g < m_groupCount; ++g) {
        // Per candidate, its seeds that can run, the most first: a later rung runs at most the survivors' runnable
        // seeds (a candidate that --skip-impossible left out runs at no rung).
        std::vector<int> runnable;
        std::int64_t fullSteps = 0; // (the group's candidates differ in their learning rate only)
        for (int c = 0; c < candidateCount(); ++c) {
            int n = 0;
            for (int s = 0; s < seedCount(); ++s) {
                const StudyPoint& p = fullPoint(g, c, s);
                n += p.skipped.empty() ? 1 : 0;
                fullSteps = std::max(fullSteps, p.steps);
            }
            runnable.push_back(n);
        }
        std::sort(runnable.begin(), runnable.end(), std::greater<>());
        for (int r = 0; r < m_halving.rungs(); ++r) {
            const int kept = r == 0 ? candidateCount() : std::min(m_halving.survivors(r), candidateCount());
            const double steps = !bySteps ? 1.0
                : m_halving.lastRung(r)   ? static_cast<double>(fullSteps)
                                          : static_cast<double>(m_halving.budget(r, fullSteps));
            total += steps * std::accumulate(runnable.begin(), runnable.begin() + kept, 0);
        }
    }
    return total;
}

int StudyPlan::totalPoints() const
{
    return static_cast<int>(plannedRuns(false));
}

double StudyPlan::totalSteps() const
{
    return plannedRuns(true);
}

std::string StudyPlan::droppedNote(
    const std::string& name, const std::vector<bool>& dropped, const std::string& where, const std::string& why) const
{
    const std::size_t total = m_points.size();
    const auto applied = total - static_cast<std::size_t>(std::count(dropped.begin(), dropped.end(), true));
    const std::string share = std::to_string(applied) + " of " + std::to_string(total) + " points";
    // The axis that decides it, if one does: every point with one of its values takes the option, none of the others
    // ("only to the mode=backup points": said for the axis, not for one point's mode).
    for (std::size_t a = 0; a < m_axes.size(); ++a) {
        const std::size_t n = m_axes[a].values.size();
        std::vector<int> state(n, -1); // per value: -1 no point yet, 0 left out everywhere, 1 taken everywhere, 2 both
        for (std::size_t i = 0; i < total; ++i) {
            if (!m_points[i].skipped.empty())
                continue;
            const auto v = static_cast<std::size_t>(groupIndices(m_points[i].group)[a]);
            const int s = dropped[i] ? 0 : 1;
            state[v] = state[v] == -1 || state[v] == s ? s : 2;
        }
        if (std::any_of(state.begin(), state.end(), [](int s) { return s == 2; }))
            continue;
        std::string values;
        for (std::size_t v = 0; v < n; ++v) {
            if (state[v] == 1)
                values += (values.empty() ? "" : " or ") + m_axes[a].name + "=" + m_axes[a].values[v];
        }
        if (values.empty())
            continue;
        return "--" + name + " applies only to the " + values + " points (" + share
            + "), and is left out of the others";
    }
    return "--" + name + " applies to " + share + ", and is left out of the others (at point " + where + ": " + why
        + ")";
}

StudyPlan StudyPlan::make(const StudySpec& spec, const std::string* configText)
{
    StudyPlan plan;
    plan.m_spec = spec;
    Options shared = spec.shared;
    for (const StudyAxis& a : spec.axes) {
        if (a.name == "seed") {
            plan.m_seeds = a;
            plan.m_seedsSwept = true;
        } else {
            plan.m_axes.push_back(a);
        }
    }

    auto resolve = [&](const Options& options, std::vector<std::string>* withoutEffect) {
        return configFromOptions(options, configText, spec.configFile, withoutEffect);
    };
    auto addAxisValue = [](Options& options, const StudyAxis& axis, std::size_t index) {
        const std::string& v = axis.values[index];
        if (!v.empty() && v != "none")
            options.emplace_back(axis.name, v);
    };

    // The first combination as resolved: the modes, the seed and the --best-of value every point starts from.
    {
        Options first = shared;
        for (const StudyAxis& a : plan.m_axes)
            addAxisValue(first, a, 0);
        if (spec.bestOf && !spec.bestOfDefaultGrid)
            addAxisValue(first, *spec.bestOf, 0);
        if (plan.m_seedsSwept)
            addAxisValue(first, plan.m_seeds, 0);
        std::vector<std::string> ignored;
        RunConfig base;
        try {
            base = resolve(first, &ignored);
        } catch (const SgdError& e) {
            std::string where;
            for (const StudyAxis& a : plan.m_axes)
                where += (where.empty() ? "" : ", ") + a.name + "=" + a.values.front();
            throw SgdError(where.empty() ? std::string(e.what()) : "--sweep: point " + where + ": " + e.what());
        }
        const bool modeSwept
            = std::any_of(plan.m_axes.begin(), plan.m_axes.end(), [](const StudyAxis& a) { return a.name == "mode"; });
        if (!modeSwept && base.modes.size() > 1) {
            std::vector<std::string> names;
            for (const Mode m : base.modes)
                names.emplace_back(modeName(m));
            plan.m_axes.insert(plan.m_axes.begin(), axisWithValues(option("mode"), names, "--mode"));
            removeOption(shared, "mode");
            plan.m_notes.push_back("each point runs one mode: --mode " + base.modesText()
                + " is an axis of the study (mode=" + base.modesText() + ")");
        }
        if (spec.seeds > 0) {
            std::vector<std::string> values;
            for (int k = 0; k < spec.seeds; ++k)
                values.push_back(std::to_string(base.seed + static_cast<std::uint64_t>(k)));
            plan.m_seeds = axisWithValues(option("seed"), values, "--seeds");
            plan.m_seedsSwept = true;
            removeOption(shared, "seed");
        }
        if (spec.bestOf && spec.bestOfDefaultGrid) {
            const OptionSpec& o = option(spec.bestOf->name);
            const Json value = o.load(base);
            if (!value.is_number() || !(value.get<double>() > 0))
                throw SgdError("--best-of " + o.name + ": the default grid multiplies the value of --" + o.name
                    + ", which is not a positive number here; give the candidates (--best-of " + o.name + "=A,B,C)");
            std::vector<std::string> values;
            for (int k = -defaultGridHalfWidth; k <= defaultGridHalfWidth; ++k)
                values.push_back(numberText(value.get<double>() * std::ldexp(1.0, k)));
            plan.m_candidates = axisWithValues(o, values, "--best-of");
        } else if (spec.bestOf) {
            plan.m_candidates = *spec.bestOf;
        }
    }
    if (!plan.m_seedsSwept)
        plan.m_seeds = singleAxis("seed");
    if (!spec.bestOf)
        plan.m_candidates = singleAxis("");
    plan.m_halving = SuccessiveHalving(plan.candidateCount(), spec.halving);

    double groups = 1;
    for (const StudyAxis& a : plan.m_axes)
        groups *= static_cast<double>(a.values.size());
    const double points = groups * plan.candidateCount() * plan.seedCount();
    if (points > maxPoints)
        throw SgdError("--sweep: " + numberText(points) + " points (every combination of the axes, candidates and "
            + "seeds); at most " + std::to_string(maxPoints) + " are allowed");
    plan.m_groupCount = static_cast<int>(groups);

    // Every point, checked as a headless run checks its options.
    std::map<std::string, std::shared_ptr<const DataSplit>> data;
    PlatformFileChecks platformChecks; // (one child process per platform, worker count and wiring)
    std::map<std::string, std::vector<bool>> dropped; // a shared option -> per point (m_points' order): left out
    std::map<std::string, std::pair<std::string, std::string>> droppedWhy; // -> the first point and why there
    std::set<std::string> ids;
    const std::set<std::string> swept = [&] {
        std::set<std::string> names;
        for (const StudyAxis& a : plan.m_axes)
            names.insert(a.name);
        if (spec.bestOf)
            names.insert(plan.m_candidates.name);
        if (plan.m_seedsSwept)
            names.insert("seed");
        return names;
    }();
    plan.m_points.reserve(static_cast<std::size_t>(points));
    plan.m_hasTarget = true;
    for (int g = 0; g < plan.m_groupCount; ++g) {
        const std::vector<int> indices = plan.groupIndices(g);
        for (int c = 0; c < plan.candidateCount(); ++c) {
            for (int s = 0; s < plan.seedCount(); ++s) {
                StudyPoint p;
                p.group = g;
                p.candidate = c;
                p.seed = s;
                p.rung = plan.m_halving.rungs() - 1;
                p.options = shared;
                std::vector<std::pair<std::string, std::string>> parts;
                for (std::size_t a = 0; a < plan.m_axes.size(); ++a) {
                    addAxisValue(p.options, plan.m_axes[a], static_cast<std::size_t>(indices[a]));
                    parts.emplace_back(
                        plan.m_axes[a].name, plan.m_axes[a].values[static_cast<std::size_t>(indices[a])]);
                }
                if (spec.bestOf) {
                    addAxisValue(p.options, plan.m_candidates, static_cast<std::size_t>(c));
                    parts.emplace_back(plan.m_candidates.name, plan.m_candidates.values[static_cast<std::size_t>(c)]);
                }
                if (plan.m_seedsSwept) {
                    addAxisValue(p.options, plan.m_seeds, static_cast<std::size_t>(s));
                    parts.emplace_back("seed", plan.m_seeds.values[static_cast<std::size_t>(s)]);
                }
                p.id = pointFolderName(parts);
                for (int k = 2; !ids.insert(p.id).second; ++k)
                    p.id = pointFolderName(parts) + "-" + std::to_string(k);
                const std::string where = [&] {
                    std::string w;
                    for (const auto& [name, value] : parts)
                        w += (w.empty() ? "" : ", ") + name + "=" + value;
                    return w.empty() ? std::string("the only point") : w;
                }();
                try {
                    std::vector<std::string> withoutEffect;
                    RunConfig config = resolve(p.options, &withoutEffect);
                    if (!withoutEffect.empty()) {
                        for (const std::string& name : withoutEffect) {
                            const std::string why = option(name).whyInapplicable(config);
                            if (swept.count(name) || !std::any_of(shared.begin(), shared.end(), [&](const auto& o) {
                                    return o.first == name;
                                }))
                                throw SgdError(config.originOf(name) + ": " + why);
                            removeOption(p.options, name);
                            std::vector<bool>& at = dropped[name];
                            at.resize(static_cast<std::size_t>(points), false);
                            at[plan.m_points.size()] = true;
                            droppedWhy.emplace(name, std::pair {where, why});
                        }
                        config = resolve(p.options, nullptr);
                    }
                    if (config.engine == EngineKind::Mpi)
                        throw SgdError("--engine mpi: a study runs each point as a process of its own, and MPI "
                                       "points would need mpirun each; use --engine sim or threads (run the study "
                                       "itself under mpirun to share its points among machines)");
                    if (config.modes.size() != 1)
                        throw SgdError("--mode: each point of a study runs one mode, but it has " + config.modesText());
                    const std::string key = dataKey(config);
                    auto it = data.find(key);
                    if (it == data.end())
                        it = data.emplace(key, std::make_shared<DataSplit>(loadData(config))).first;
                    p.steps = checkRunnable(config, it->second, &platformChecks);
                    p.engine = config.engine;
                    p.measuresThisMachine = config.engine == EngineKind::Sim && config.platform.empty()
                        && (config.cluster == ClusterKind::Local || config.cluster == ClusterKind::LocalMpi);
                    p.hasTarget = config.targetAccuracy >= 0 || config.targetLoss >= 0;
                    if (!plan.m_halving.lastRung(0)) {
                        // Every rung's run, with its budget of steps.
                        for (int r = 0; r + 1 < plan.m_halving.rungs(); ++r) {
                            Options rung = p.options;
                            removeOption(rung, "steps");
                            removeOption(rung, "epochs");
                            rung.emplace_back("steps", std::to_string(plan.m_halving.budget(r, p.steps)));
                            (void)resolve(rung, nullptr);
                        }
                    }
                } catch (const SgdError& e) {
                    if (!spec.skipImpossible)
                        throw SgdError("--sweep: point " + where + " cannot run: " + e.what()
                            + " (leave it out of the axes, or give --skip-impossible)");
                    p.skipped = e.what();
                }
                if (p.skipped.empty()) {
                    plan.m_hasTarget = plan.m_hasTarget && p.hasTarget;
                    plan.m_threadsPoints = plan.m_threadsPoints || p.engine == EngineKind::Threads;
                    plan.m_calibratedPoints = plan.m_calibratedPoints || p.measuresThisMachine;
                }
                plan.m_points.push_back(std::move(p));
            }
        }
    }
    const int runnable = static_cast<int>(std::count_if(
        plan.m_points.begin(), plan.m_points.end(), [](const StudyPoint& p) { return p.skipped.empty(); }));
    if (runnable == 0)
        throw SgdError("--sweep: no point of the study can run (" + plan.m_points.front().skipped + ")");
    if (runnable < static_cast<int>(plan.m_points.size()))
        plan.m_notes.push_back(std::to_string(plan.m_points.size() - static_cast<std::size_t>(runnable)) + " of "
            + std::to_string(plan.m_points.size()) + " points cannot run and are skipped (--skip-impossible)");
    for (const auto& entry : dropped) {
        const std::string& name = entry.first;
        const std::vector<bool>& at = entry.second;
        const auto count = static_cast<std::size_t>(std::count(at.begin(), at.end(), true));
        if (count == plan.m_points.size())
            throw SgdError("--" + name + ": takes effect on no point of the study: " + droppedWhy[name].second);
        plan.m_notes.push_back(plan.droppedNote(name, at, droppedWhy[name].first, droppedWhy[name].second));
    }
    return plan;
}

} // namespace sgdscope
