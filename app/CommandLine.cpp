#include "app/CommandLine.h"

#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/EngineShapes.h"
#include "core/run/Options.h"

#include <set>

namespace sgdscope {

CommandLine parseCommandLine(const std::vector<std::string>& args)
{
    CommandLine cl;
    std::set<std::string> seen; // an option given twice would silently lose its first value
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (!arg.empty() && arg[0] != '-') {
            cl.paths.push_back(arg); // the window's run folder or data; headless refuses it (buildRunConfig)
            continue;
        }
        if (arg.rfind("--", 0) != 0 || arg.size() == 2)
            throw SgdError("'" + arg.substr(0, 80) + "' is not an option; options start with -- (see --help)");
        std::string name = arg.substr(2);
        std::string value;
        bool hasValue = false;
        if (const std::size_t eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            hasValue = true;
        }
        auto flag = [&](bool& field) {
            if (hasValue)
                throw SgdError("--" + name + ": takes no value");
            field = true;
        };
        if (name == "headless") {
            flag(cl.headless);
            continue;
        }
        if (name == "help") {
            flag(cl.help);
            continue;
        }
        if (name == "version") {
            flag(cl.version);
            continue;
        }
        if (name == "list-presets") {
            flag(cl.listPresets);
            continue;
        }
        if (name == "session-child") {
            flag(cl.sessionChild);
            continue;
        }
        if (name == "mode-child") {
            flag(cl.modeChild);
            continue;
        }
        const OptionSpec* spec = findOption(name);
        if (!spec && name != "config")
            throw SgdError("--" + name.substr(0, 60) + ": unknown option; see --help for the list");
        if (!hasValue && spec && !spec->flagValue.empty()
            && (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)) {
            value = spec->flagValue; // --dc-adaptive alone: on
            hasValue = true;
        }
        if (!hasValue) {
            if (i + 1 >= args.size())
                throw SgdError("--" + name + ": needs a value");
            value = args[++i];
        }
        if (!(spec && spec->repeatable) && !seen.insert(name).second)
            throw SgdError("--" + name + ": given more than once; give it once (only --slow may be repeated)");
        if (name == "config") {
            if (!cl.configFile.empty())
                throw SgdError("--config: given twice; give one configuration file");
            if (value.empty())
                throw SgdError("--config: an empty file name is not allowed");
            cl.configFile = value;
            continue;
        }
        cl.options.emplace_back(name, value);
    }
    return cl;
}

RunConfig buildRunConfig(const CommandLine& cl, const std::string* configText)
{
    if (!cl.paths.empty())
        throw SgdError("'" + cl.paths.front().substr(0, 80) + "' is not an option; options start with -- (see --help); "
            + "a run folder or data set named alone opens in the window (sgdscope PATH)");
    ConfigBuilder builder;
    Json config;
    const std::string configWhat = "config file '" + cl.configFile + "'";
    if (configText) {
        config = parseJson(*configText, configWhat);
        if (!config.is_object())
            throw SgdError(configWhat + ": expected a JSON object of options, got " + typeName(config));
    }
    // The preset is the base: the command line's, else the config file's, else parabola.
    std::string preset = "parabola";
    std::string presetOrigin = "--preset";
    if (const Json* p = member(config, "preset")) {
        if (!p->is_string())
            throw SgdError("field \"preset\" of " + configWhat + ": expected a string, got " + typeName(*p));
        preset = p->get<std::string>();
        presetOrigin = "field \"preset\" of " + configWhat;
    }
    for (const auto& [name, value] : cl.options) {
        if (name == "preset") {
            preset = value;
            presetOrigin = "--preset";
        }
    }
    builder.applyPreset(preset, presetOrigin);
    if (config.is_object()) {
        Json rest = config;
        rest.erase("preset");
        builder.applyJson(rest, configWhat);
    }
    for (const auto& [name, value] : cl.options) {
        if (name != "preset")
            builder.applyOption(name, value);
    }
    return builder.resolve();
}

RunConfig buildRunConfig(const CommandLine& cl)
{
    if (cl.configFile.empty())
        return buildRunConfig(cl, nullptr);
    const std::string text = readConfigFile(cl.configFile);
    return buildRunConfig(cl, &text);
}

std::string helpText()
{
    std::string out
        = "Usage:\n"
          "  sgdscope [options]                       open the window so set (default preset: parabola)\n"
          "  sgdscope PATH [options]                  open a run folder, or train on a CSV file or IDX folder\n"
          "  sgdscope --headless --out DIR [options]  the same run without a window; results in DIR\n"
          "  mpirun -np N sgdscope --headless --engine mpi --out DIR [options]\n"
          "                                           the same run on N processes (rank 0 writes DIR)\n\n"
          "Options:\n";
    auto line = [&](const std::string& left, const std::string& help) {
        std::string l = "  " + left;
        if (l.size() < 26)
            l.append(26 - l.size(), ' ');
        else
            l += "\n" + std::string(26, ' ');
        out += l + help + "\n";
    };
    line("--headless", "run without a window (needs --out)");
    line("--config FILE", "JSON object with the same keys as these options (without dashes)");
    for (const auto& o : optionTable())
        line("--" + o.name + (o.valueName.empty() ? "" : " " + o.valueName), o.help);
    line("--list-presets", "print the presets and exit");
    line("--session-child", "(used by the window) a training session driven by JSON lines on standard input");
    line("--mode-child", "(used by headless runs) one simulated mode of a list, in a fresh simulation of its own");
    line("--version", "print the version and the kernel path (SGDSCOPE_ISA=scalar|avx2|avx512 forces one) and exit");
    line("--help", "this text");
    out += "\nSettings come from the preset, then the --config file, then the command line, each overriding the\n"
           "one before. An option that would have no effect in the resulting run is refused, with the reason.\n";
    out += "\nOne step for each mode (--lr is for a batch of B samples): sync and backup apply lr to the mean "
           "gradient\n"
           "of the batch (backup: of the gradients kept); local-sgd's workers each apply lr to the mean gradient of\n"
           "their own B / P samples and the models are averaged (one local step without momentum is sync); async, ssp\n"
           "and dc-asgd apply a push of b = B / P samples with lr x b / B (--async-lr scaled): every mode takes the\n"
           "same step per sample.\n";
    out += "\nSimulated clusters (--engine sim --cluster C), each a star of hosts around one switch:\n";
    const std::string clusters = simulatedClustersText();
    for (std::size_t at = 0; at < clusters.size();) {
        const std::size_t end = std::min(clusters.find("; ", at), clusters.size());
        out += "  " + clusters.substr(at, end - at) + "\n";
        at = end + 2;
    }
    out += "\nFiles in DIR: summary.json, metrics.csv, loss.png, idle.png, staleness.png, comparison.png.\n"
           "Exit codes: 0 done; 2 bad input (nothing written); 3 diverged (summary still written);\n"
           "130/143 interrupted by Ctrl+C/SIGTERM (summary marked interrupted).\n";
    return out;
}

} // namespace sgdscope
