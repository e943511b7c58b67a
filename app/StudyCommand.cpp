#include "app/StudyCommand.h"

#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/HeadlessStart.h"
#include "core/run/study/StudyMpi.h"

#include <optional>

namespace sgdscope {

int runStudyCommand(
    const CommandLine& commandLine, const std::vector<std::string>& args, const StudyChartWriter& charts)
{
    StudySpec spec;
    std::optional<std::string> configText;
    try {
        if (!commandLine.paths.empty())
            throw SgdError("'" + commandLine.paths.front().substr(0, 80)
                + "' is not an option; a study's folder is given with --study DIR");
        spec = makeStudySpec(commandLine.studyFlags, commandLine.options, commandLine.configFile);
        if (!commandLine.configFile.empty())
            configText = readConfigFile(commandLine.configFile);
    } catch (const SgdError& e) {
        return refuseRun(e.what());
    }
    StudyFrontEnd frontEnd;
    frontEnd.charts = charts;
    frontEnd.command = commandText(args);
    const std::string* text = configText ? &*configText : nullptr;
    // (under mpirun with several processes, the ranks share the points out; rank 0 writes the study)
    return startStudy(spec, text, frontEnd);
}

} // namespace sgdscope
