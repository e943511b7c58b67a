#pragma once

#include "core/common/Json.h"
#include "core/run/study/StudyState.h"

#include <cstddef>
#include <string>
#include <vector>

namespace sgdscope {

/// The runner's state of one study: what study.json says besides the table.
struct StudyMeta
{
    std::string command;
    std::string where;
    Json identity;
    std::vector<std::string> notes;
    std::vector<std::string> problems;
    std::size_t problemsSaid = 0; // the first problems were said on stderr as they came
    double startedAt = 0.0;
    double busySeconds = 0.0; // with at least one point running
    double chartSeconds = 0.0;
    int reused = 0;
    int ran = 0;
    double pointSeconds = 0.0; // the points' processes, summed
    double residentAfterFirst = -1.0; // this process's resident memory once the first point settled
    double residentAfterLast = -1.0; // and once the last had (before the charts)
};

/// Seconds on the steady clock (the study's timings).
double studyClock();

/// Writes DIR/study.json (the command, identity, notes, timing, memory, --best-of's rungs and the table with each
/// point's options and times) and DIR/results.csv, each atomically. `status`: running, complete, interrupted or
/// incomplete (points still running are then marked interrupted).
void writeStudyFiles(const std::string& dir, const StudyState& state, const StudyMeta& meta, const std::string& status);

/// Checks the study's folder: new, empty, or holding this very study (its study.json's identity equals
/// `identity`, its shared options in any order); creates it and its points/ folder. Throws SgdError naming --study
/// and the difference.
void prepareStudyFolder(const std::string& dir, const Json& identity);

} // namespace sgdscope
