#include "core/run/study/PointExecutor.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace sgdscope {

namespace {

/// Variables an MPI launcher sets for its processes: a point's run must not take itself for a rank of the job
/// the study runs in (core/engines/mpi/MpiContext.h reads OMPI_COMM_WORLD_SIZE, PMIX_SIZE, PMI_SIZE).
bool mpiVariable(const char* entry)
{
    for (const char* prefix : {"OMPI_", "PMIX_", "PMI_", "OPAL_", "ORTE_", "HYDRA_", "MPIR_"}) {
        if (std::strncmp(entry, prefix, std::strlen(prefix)) == 0)
            return true;
    }
    return false;
}

} // namespace

std::vector<std::string> pointArguments(const std::vector<std::pair<std::string, std::string>>& options,
    const std::string& folder, const std::string& configFile)
{
    std::vector<std::string> args {"--headless", "--out", folder};
    if (!configFile.empty()) {
        args.emplace_back("--config");
        args.push_back(configFile);
    }
    for (const auto& [name, value] : options)
        args.push_back("--" + name + "=" + value);
    return args;
}

std::vector<std::string> pointEnvironment(const std::vector<std::pair<std::string, std::string>>& extra)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        if (mpiVariable(*e))
            continue;
        const std::string entry = *e;
        const std::string name = entry.substr(0, entry.find('='));
        if (std::any_of(extra.begin(), extra.end(), [&](const auto& x) { return x.first == name; }))
            continue;
        env.push_back(entry);
    }
    for (const auto& [name, value] : extra)
        env.push_back(name + "=" + value);
    return env;
}

std::string thisProgram()
{
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("/proc/self/exe") : self.string();
}

} // namespace sgdscope
