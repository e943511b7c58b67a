#include "core/run/study/StudySpec.h"

#include "core/common/Error.h"
#include "core/io/Sha256.h"
#include "core/run/Options.h"
#include "core/run/study/ReadyStudies.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace sgdscope {

namespace {

StudyFlag flag(
    std::string name, std::string valueName, std::string help, bool repeatable = false, std::string valueWhenAlone = {})
{
    StudyFlag f;
    f.name = std::move(name);
    f.valueName = std::move(valueName);
    f.help = std::move(help);
    f.repeatable = repeatable;
    f.valueOptional = !valueWhenAlone.empty();
    f.flagValue = std::move(valueWhenAlone);
    return f;
}

std::vector<StudyFlag> makeFlags()
{
    std::vector<StudyFlag> f;
    f.push_back(flag("study", "DIR",
        "run a study into DIR: one headless run per point, each in a run folder of its own (DIR/points/...), then "
        "study.json, results.csv and charts; the same command again continues where it stopped"));
    f.push_back(flag("sweep", "NAME=VALUES",
        "an axis: a run option and its values, e.g. workers=1..256 (doubling), lr=0.001..1x10, mode=sync,async, "
        "cluster=datacenter,wan; none leaves the option out; every combination of the axes is a point (repeatable)",
        true));
    f.push_back(flag("seeds", "K",
        "each point with the seed and the K - 1 after it: charts show their median (a run that missed the target "
        "or diverged counts as the worst; no point where half or more did) and the band (min-max) of the others"));
    f.push_back(flag("best-of", "NAME[=VALUES]",
        "candidates of an option (default: lr times 2^-3 ... 2^3); for every combination of the other axes the "
        "study keeps the one with the lowest final training loss, or the shortest time to the target if one is set"));
    f.push_back(flag("halving", "[ETA]",
        "with --best-of: successive halving; every candidate first runs 1/ETA^k of the steps, the best 1/ETA of "
        "them go on to ETA times more, up to the full run (default ETA 3)",
        false, "3"));
    f.push_back(flag("ready", "NAME",
        "a ready-made study that redraws a classic figure: scaling | stragglers | staleness (its axes and options; "
        "the command line's own replace theirs)"));
    f.push_back(flag("jobs", "N", "points run at once on this machine (also -j N; default 1)"));
    f.push_back(flag("share-cores", "",
        "let the points that time the cores (threads engine; simulated on --cluster local or local-mpi, calibrated "
        "here) run beside other points (by default each runs alone)"));
    f.push_back(flag("skip-impossible", "",
        "list the points that cannot run (e.g. backup with 1 worker) as skipped instead of refusing the study"));
    return f;
}

int integerFlag(const std::string& name, const std::string& value, int low, int high)
{
    OptionSpec spec;
    spec.name = name;
    spec.type = OptionType::Integer;
    spec.min = low;
    spec.max = high;
    return static_cast<int>(spec.parse(Json(value), "--" + name).number);
}

bool sweeps(const StudySpec& spec, const std::string& name)
{
    return std::any_of(spec.axes.begin(), spec.axes.end(), [&](const StudyAxis& a) { return a.name == name; })
        || (spec.bestOf && spec.bestOf->name == name);
}

std::string hexOf(const std::string& text)
{
    Sha256 sha;
    sha.update(text.data(), text.size());
    return sha.finishHex();
}

} // namespace

const std::vector<StudyFlag>& studyFlags()
{
    static const std::vector<StudyFlag> flags = makeFlags();
    return flags;
}

const StudyFlag* findStudyFlag(std::string_view name)
{
    for (const StudyFlag& f : studyFlags()) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

Json StudySpec::identity(const std::string* configText) const
{
    Json j = Json::object();
    // The shared options in name order: the same command with its options in another order is the same study.
    Options sortedShared = shared;
    std::stable_sort(
        sortedShared.begin(), sortedShared.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    Json sharedJson = Json::array();
    for (const auto& [name, value] : sortedShared)
        sharedJson.push_back(Json::array({name, value}));
    j["shared"] = sharedJson;
    if (!configFile.empty())
        j["config"] = Json {{"file", configFile}, {"sha256", configText ? hexOf(*configText) : std::string()}};
    Json axesJson = Json::array();
    for (const StudyAxis& a : axes)
        axesJson.push_back(Json {{"name", a.name}, {"values", a.values}});
    j["axes"] = axesJson;
    j["seeds"] = seeds;
    if (bestOf)
        j["best_of"] = Json {
            {"name", bestOf->name}, {"values", bestOfDefaultGrid ? Json("default grid") : Json(bestOf->values)}};
    j["halving"] = halving;
    j["skip_impossible"] = skipImpossible;
    return j;
}

StudySpec makeStudySpec(
    const StudySpec::Options& givenFlags, const StudySpec::Options& givenOptions, const std::string& configFile)
{
    StudySpec::Options flags = givenFlags;
    StudySpec::Options runOptions = givenOptions;
    applyReadyStudy(flags, runOptions); // --ready NAME: its flags and options, the command line's over them
    StudySpec spec;
    bool seedAxis = false;
    for (const auto& [name, value] : flags) {
        if (name == "study") {
            if (value.empty())
                throw SgdError("--study: an empty folder name is not allowed; give the study's folder, e.g. --study "
                               "scaling");
            spec.dir = value;
        } else if (name == "sweep") {
            StudyAxis axis = parseAxis(value, "--sweep");
            if (sweeps(spec, axis.name))
                throw SgdError("--sweep " + axis.name + ": swept twice; give each axis once, with all its values");
            seedAxis = seedAxis || axis.name == "seed";
            spec.axes.push_back(std::move(axis));
        } else if (name == "seeds") {
            spec.seeds = integerFlag(name, value, 1, 1000);
        } else if (name == "best-of") {
            if (value.find('=') != std::string::npos) {
                spec.bestOf = parseAxis(value, "--best-of");
            } else {
                const OptionSpec* option = findOption(value);
                if (!option)
                    throw SgdError("--best-of: '" + value.substr(0, 60)
                        + "' is not a run option; give one, e.g. --best-of lr or --best-of lr=0.001..1x10");
                if (option->type != OptionType::Number)
                    throw SgdError("--best-of " + value
                        + ": has no default grid (a log grid is for a number such as lr); give its candidates, "
                          "e.g. --best-of "
                        + value + "=A,B,C");
                spec.bestOf = StudyAxis {};
                spec.bestOf->name = value;
                spec.bestOfDefaultGrid = true;
            }
        } else if (name == "halving") {
            spec.halving = integerFlag(name, value, 2, 100);
        } else if (name == "jobs") {
            spec.jobs = integerFlag(name, value, 1, 256);
            spec.jobsGiven = true;
        } else if (name == "share-cores") {
            spec.shareCores = true;
        } else if (name == "skip-impossible") {
            spec.skipImpossible = true;
        } else {
            throw SgdError("--" + name + ": not a study flag");
        }
    }
    if (spec.dir.empty())
        throw SgdError("--sweep: a study needs its folder; give --study DIR");
    if (spec.bestOf) {
        for (const StudyAxis& a : spec.axes) {
            if (a.name == spec.bestOf->name)
                throw SgdError("--best-of " + a.name + ": also swept by --sweep " + a.name
                    + "; the candidates of --best-of are its values, give them there");
        }
    }
    if (spec.halving > 0 && !spec.bestOf)
        throw SgdError("--halving: stops candidates of --best-of early, but there is none; add --best-of lr");
    if (spec.seeds > 0 && seedAxis)
        throw SgdError("--seeds: cannot be combined with --sweep seed; give the seeds one way");
    for (const auto& [name, value] : runOptions) {
        if (name == "progress") {
            OptionSpec progress = option("progress");
            RunConfig probe;
            progress.store(probe, progress.parse(Json(value), "--progress"), "--progress");
            spec.progress = true;
            continue;
        }
        if (const std::string why = whyNotInStudy(name); !why.empty())
            throw SgdError("--" + name + ": not for a study: " + why);
        if (sweeps(spec, name))
            throw SgdError("--" + name + ": also swept by "
                + (spec.bestOf && spec.bestOf->name == name ? "--best-of " : "--sweep ") + name
                + "; give it in one place");
        if (name == "seed" && seedAxis)
            throw SgdError("--seed: also swept by --sweep seed; give it in one place");
        spec.shared.emplace_back(name, value);
    }
    if (!configFile.empty()) {
        std::error_code ec;
        const std::filesystem::path absolute = std::filesystem::absolute(configFile, ec);
        spec.configFile = ec ? configFile : absolute.lexically_normal().string();
    }
    return spec;
}

std::string commandText(const std::vector<std::string>& args)
{
    std::string out = "sgdscope";
    for (const std::string& a : args) {
        const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c))
                || std::string_view("-_.,=:/+@%").find(c) != std::string_view::npos;
        });
        if (plain) {
            out += " " + a;
        } else {
            std::string quoted = "'";
            for (const char c : a)
                quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
            out += " " + quoted + "'";
        }
    }
    return out;
}

} // namespace sgdscope
