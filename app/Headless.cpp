#include "app/Headless.h"

#include "core/common/Error.h"
#include "core/run/HeadlessStart.h"

namespace sgdscope {

int runHeadless(const CommandLine& commandLine, const ChartWriter& charts, const ProgressFactory& progress)
{
    RunConfig config;
    try {
        config = buildRunConfig(commandLine);
        if (config.out.empty())
            throw SgdError("--out: --headless needs an output folder, e.g. --out results");
    } catch (const SgdError& e) {
        return refuseRun(e.what());
    }
    return startHeadlessRun(config, charts, progress);
}

} // namespace sgdscope
