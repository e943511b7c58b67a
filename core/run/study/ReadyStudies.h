#pragma once

#include "core/run/study/StudySpec.h"

#include <string>
#include <vector>

namespace sgdscope {

/// A ready-made study (`--ready NAME`) that redraws a classic figure: its study flags and the run options its
/// points share, declared here once (--help and the README list them).
struct ReadyStudy
{
    std::string name;
    std::string figure; // what it redraws, one line
    StudySpec::Options flags; // --sweep, --best-of, --halving, --seeds
    StudySpec::Options options; // run options every point shares
};
const std::vector<ReadyStudy>& readyStudies();

/// `--ready NAME` merged with the command line's own: the command line's --sweep of an axis replaces the ready
/// study's sweep of it, its --best-of, --halving and --seeds replace theirs, and its run options replace the
/// ready study's options of the same name (the rest are added). Throws SgdError listing the ready studies if
/// NAME is none of them. Flags and options without --ready are returned as they are.
void applyReadyStudy(StudySpec::Options& flags, StudySpec::Options& options);

} // namespace sgdscope
