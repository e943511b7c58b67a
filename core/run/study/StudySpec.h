#pragma once

#include "core/common/Json.h"
#include "core/run/study/StudyAxis.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sgdscope {

/// A study as its command asks for it (`sgdscope --study DIR --sweep ... [run options]`): the options every
/// point shares, the axes it sweeps, the replicates and the learning-rate search, and how to schedule them.
/// A study is a set of ordinary headless runs, one run folder per point (DESIGN: "a study only schedules,
/// collects and draws"); the way Optuna separates its parts, this is the study's record of what to run, the
/// plan (StudyPlan.h) enumerates the points, the pruner (SuccessiveHalving.h) decides which candidates go on.
struct StudySpec
{
    using Options = std::vector<std::pair<std::string, std::string>>;

    std::string dir; // --study DIR
    Options shared; // run options every point takes (names without dashes), in the order given
    std::string configFile; // --config FILE, as an absolute path ("": none)
    std::vector<StudyAxis> axes; // --sweep, in the order given (the last varies fastest)
    int seeds = 0; // --seeds K: the seed and the K - 1 after it (0: not given)
    std::optional<StudyAxis> bestOf; // --best-of NAME[=VALUES]: candidates, one kept per combination
    bool bestOfDefaultGrid = false; // --best-of NAME alone: the shared value times 2^-3 ... 2^3
    int halving = 0; // --halving [ETA]: successive halving with factor ETA (0: every candidate runs in full)
    int jobs = 1; // -j N: points run at once on this machine
    bool jobsGiven = false;
    bool shareCores = false; // --share-cores: points that time the cores may run beside other points
    bool progress = false; // --progress -: the study's progress as JSON lines on standard output
    bool skipImpossible = false; // --skip-impossible: points that cannot run are listed, not refused

    /// What makes two commands the same study: resuming one with another is refused (the scheduling flags
    /// -j, --share-cores and --progress may differ, and so may the order of the shared options; the axes' order
    /// numbers the points, so it counts). `configText` is the --config file's text (or null).
    Json identity(const std::string* configText) const;
};

/// A flag of the study itself (not a run option), declared once for the command line and --help.
struct StudyFlag
{
    std::string name; // without dashes
    std::string valueName; // "" for a flag without value
    std::string help;
    bool repeatable = false;
    bool valueOptional = false; // --halving alone
    std::string flagValue; // the value when given alone
};
const std::vector<StudyFlag>& studyFlags();
const StudyFlag* findStudyFlag(std::string_view name);

/// Builds the spec from the study's flags (names without dashes, in order) and the run options (as the command
/// line parsed them) and the --config file's path. Refuses (SgdError naming the flag, axis or option and what is
/// allowed) what cannot make a study: an unknown axis or a value its option refuses, an option both shared and
/// swept, outputs every point would share. What depends on the points' combinations is checked by StudyPlan.
StudySpec makeStudySpec(
    const StudySpec::Options& flags, const StudySpec::Options& runOptions, const std::string& configFile);

/// The study's command line as typed, for study.json ("sgdscope --study runs --sweep workers=1..8 ...").
std::string commandText(const std::vector<std::string>& args);

} // namespace sgdscope
