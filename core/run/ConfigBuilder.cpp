#include "core/run/ConfigBuilder.h"

#include "core/common/Error.h"
#include "core/io/Files.h"
#include "core/run/Options.h"
#include "core/run/Presets.h"

#include <filesystem>

namespace sgdscope {

std::vector<std::string> presetNames()
{
    return option("preset").choices;
}

std::string readConfigFile(const std::string& path)
{
    return readFile(path, "--config: file", 16U << 20);
}

RunConfig configFromOptions(const std::vector<std::pair<std::string, std::string>>& options,
    const std::string* configText, const std::string& configFile, std::vector<std::string>* withoutEffect)
{
    ConfigBuilder builder;
    Json config;
    const std::string configWhat = "config file '" + configFile + "'";
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
    for (const auto& [name, value] : options) {
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
    for (const auto& [name, value] : options) {
        if (name != "preset")
            builder.applyOption(name, value);
    }
    return builder.resolve(withoutEffect);
}

void ConfigBuilder::applyPreset(const std::string& name, const std::string& origin)
{
    const OptionValue checked = option("preset").parse(Json(name), origin);
    for (const auto& p : builtinPresetTexts()) {
        if (checked.text == p.name) {
            const std::string what = "preset '" + checked.text + "'";
            const Json preset = parseJson(p.json, what);
            applyObject(preset, what, false);
            if (const Json* d = member(preset, "dataset"); d && d->is_string())
                m_presetDataset = d->get<std::string>();
            m_settings["preset"] = Setting {Json(checked.text), origin, true, origin};
            return;
        }
    }
}

void ConfigBuilder::applyJson(const Json& object, const std::string& what)
{
    applyObject(object, what, true);
}

void ConfigBuilder::applyObject(const Json& object, const std::string& what, bool fromUser)
{
    if (!object.is_object())
        throw SgdError(what + ": expected a JSON object of options, got " + typeName(object));
    for (const auto& [key, value] : object.items()) {
        const std::string origin = "field \"" + key + "\" of " + what;
        if (key == "config" || key == "headless" || key == "help")
            throw SgdError(origin + ": not allowed in a configuration file");
        const OptionSpec* spec = findOption(key);
        if (!spec)
            throw SgdError(origin + ": unknown field; allowed fields are the options of --help without dashes");
        if (value.is_null())
            throw SgdError(origin + ": null is not a value; leave the field out instead");
        if (value.is_boolean() && spec->type == OptionType::Choice && !spec->flagValue.empty()) {
            // A flag's on or off ("dc-adaptive": true).
            m_settings[key] = Setting {Json(value.get<bool>() ? "on" : "off"), origin, fromUser, what};
            continue;
        }
        if (value.is_object() || value.is_boolean())
            throw SgdError(origin + ": expected a number or a string, got " + typeName(value));
        if (value.is_array() && spec->type != OptionType::List)
            throw SgdError(origin + ": expected a number or a string, got an array");
        m_settings[key] = Setting {value, origin, fromUser, what};
    }
}

void ConfigBuilder::applyOption(const std::string& name, const std::string& value)
{
    const std::string origin = "--" + name;
    const OptionSpec* spec = findOption(name);
    if (!spec)
        throw SgdError(origin + ": unknown option; see --help for the list");
    auto it = m_settings.find(name);
    if (spec->repeatable && it != m_settings.end() && it->second.origin == origin) {
        it->second.value.push_back(value); // --slow 0:4 --slow 1:2
        return;
    }
    m_settings[name] = Setting {spec->repeatable ? Json::array({value}) : Json(value), origin, true, origin};
}

RunConfig ConfigBuilder::resolve(std::vector<std::string>* withoutEffect) const
{
    RunConfig c;
    auto setting = [&](const std::string& key) -> const Setting* {
        const auto it = m_settings.find(key);
        return it == m_settings.end() ? nullptr : &it->second;
    };
    for (const OptionSpec& spec : optionTable()) {
        if (const Setting* s = setting(spec.name)) {
            spec.store(c, spec.parse(s->value, s->origin), s->origin);
            c.origins[spec.name] = s->fromUser ? s->origin : "--" + spec.name + " (from " + s->source + ")";
        }
    }

    const Setting* steps = setting("steps");
    const Setting* epochs = setting("epochs");
    if (steps && epochs) {
        // The user's choice replaces the preset's (a preset's epochs, the user's --steps).
        if (steps->fromUser == epochs->fromUser)
            throw SgdError(steps->origin + ": cannot be combined with " + epochs->origin + "; give one of them");
        if (steps->fromUser)
            c.epochs = 0;
        else
            c.steps = 0;
    }

    // The model is --layers (an MLP's widths) or --model (a list of layers): the user's replaces the preset's.
    const Setting* layers = setting("layers");
    const Setting* model = setting("model");
    if (layers && model) {
        if (layers->fromUser == model->fromUser)
            throw SgdError(model->origin + ": cannot be combined with " + layers->origin + "; give one of them");
        if (layers->fromUser) {
            c.model.clear();
            c.origins.erase("model");
        } else {
            c.layers.clear();
            c.origins.erase("layers");
        }
    }

    // --data without --dataset: a folder holds IDX files, a file is CSV.
    const Setting* data = setting("data");
    const Setting* dataset = setting("dataset");
    if (data && data->fromUser && !(dataset && dataset->fromUser)) {
        std::error_code ec;
        const auto status = std::filesystem::status(c.data, ec);
        if (!std::filesystem::exists(status))
            throw SgdError(data->origin + ": '" + c.data + "' does not exist");
        if (std::filesystem::is_directory(status)) {
            if (c.dataset != DatasetKind::FashionMnist)
                c.dataset = DatasetKind::Idx;
        } else {
            c.dataset = DatasetKind::Csv;
        }
        c.origins["dataset"] = data->origin + " (a " + (c.dataset == DatasetKind::Csv ? "file" : "folder") + ")";
        // IDX labels are classes: a preset's loss (parabola's mse) belongs to the preset's data, as its sample
        // count and widths do; the user's own --loss stays theirs (and is refused if it does not fit).
        const Setting* loss = setting("loss");
        if (c.dataset == DatasetKind::Idx && loss && !loss->fromUser && c.loss != LossKind::SoftmaxCrossEntropy) {
            c.loss = LossKind::SoftmaxCrossEntropy;
            c.origins["loss"] = data->origin + " (IDX labels are classes)";
        }
    }

    // A preset's sample count belongs to its own data set: it does not cut the user's data.
    const Setting* samples = setting("samples");
    if (samples && !samples->fromUser && toString(c.dataset) != m_presetDataset)
        c.samples = 0;

    // --batch-per-worker B: the batch is P x B (it replaces a preset's batch, not the user's).
    if (const Setting* perWorker = setting("batch-per-worker"); perWorker && c.batchPerWorker > 0) {
        if (const Setting* batch = setting("batch"); batch && batch->fromUser)
            throw SgdError(perWorker->origin + ": cannot be combined with " + batch->origin
                + "; give the batch per worker or the whole batch, not both");
        const std::int64_t total = static_cast<std::int64_t>(c.batchPerWorker) * c.workers;
        if (total > (1 << 30))
            throw SgdError(perWorker->origin + ": " + std::to_string(c.batchPerWorker) + " x "
                + std::to_string(c.workers) + " workers is a batch of " + std::to_string(total)
                + ", above the largest allowed (1073741824)");
        c.batch = static_cast<int>(total);
        c.origins["batch"] = perWorker->origin + " (" + std::to_string(c.batchPerWorker) + " x "
            + std::to_string(c.workers) + " workers)";
    }

    // (Under MPI the worker count follows from the processes; the MPI front end checks --slow against it.)
    if (const Setting* slow = setting("slow"); slow && c.engine != EngineKind::Mpi) {
        for (const auto& s : c.slow) {
            if (s.worker >= c.workers)
                throw SgdError(slow->origin + ": worker " + std::to_string(s.worker) + " does not exist; with "
                    + std::to_string(c.workers) + " workers they are 0 to " + std::to_string(c.workers - 1));
        }
    }

    // Every option the user gave must take effect.
    for (const OptionSpec& spec : optionTable()) {
        const Setting* s = setting(spec.name);
        if (!s || !s->fromUser || !spec.whyInapplicable)
            continue;
        if (const std::string why = spec.whyInapplicable(c); !why.empty()) {
            if (!withoutEffect)
                throw SgdError(s->origin + ": " + why);
            withoutEffect->push_back(spec.name);
        }
    }
    return c;
}

} // namespace sgdscope
