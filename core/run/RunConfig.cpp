#include "core/run/RunConfig.h"

#include "core/common/Error.h"
#include "core/run/Presets.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

namespace sgdscope {

const std::vector<OptionInfo>& runOptions()
{
    static const std::vector<OptionInfo> options = {
        {"preset", "NAME", "start from a preset: parabola | fashion-mnist | blobs (default parabola)"},
        {"mode", "M", "sync | async | both (default both: the same data, seed and samples, one after the other)"},
        {"workers", "P", "worker threads, 1 to 256 (default 1)"},
        {"batch", "B", "samples per update (default: the whole training set)"},
        {"accum", "K", "micro-batches per worker per update, 1 to 4096 (default 1)"},
        {"chunk", "C", "samples per chunk of the fixed reduction (default: automatic, see README)"},
        {"steps", "S", "sync updates; async trains on the same S x B samples"},
        {"epochs", "E", "alternative to --steps: passes over the training set"},
        {"lr", "X", "learning rate, above 0"},
        {"momentum", "M", "SGD momentum, 0 <= M < 1 (default 0)"},
        {"seed", "N", "seed for the initial weights, data order and jitter (default 0)"},
        {"layers", "LIST", "layer widths, e.g. 1,5,1 (first = input features, last = outputs)"},
        {"activation", "A", "hidden activation: tanh | relu | sigmoid | identity"},
        {"loss", "L", "mse | cross-entropy"},
        {"weight-init", "I", "normal (standard normal, as the seed example) | he | glorot"},
        {"dataset", "NAME", "parabola | blobs | fashion-mnist | idx (MNIST-style folder) | csv"},
        {"samples", "N", "parabola/blobs: number of points; loaded sets: use the first N training samples"},
        {"data", "PATH", "CSV file, or a folder of MNIST-style IDX files (train-*, t10k-*)"},
        {"csv-header", "H", "auto | yes | no (default auto: a first line that is not all numbers is a header)"},
        {"targets", "LIST", "CSV target columns, by 0-based index or header name (default: the last column)"},
        {"slow", "W:F", "worker W is F times slower (repeatable)"},
        {"jitter", "SIGMA", "random compute-time factor exp(SIGMA x z), z standard normal, seeded"},
        {"async-apply", "A", "lock (a short critical section, as a parameter server; default) | lockfree (Hogwild!)"},
        {"async-lr", "R", "constant | staleness (lr / max(1, staleness), Zhang et al. 2016)"},
        {"eval-every", "N",
            "loss on the whole training set every N sync updates (0: only at the end; default: automatic)"},
        {"init", "FILE", "initial parameters from a safetensors file (PyTorch nn.Sequential names)"},
        {"save-params", "FILE", "write the final parameters (safetensors F32; the sync run's when --mode both)"},
        {"out", "DIR", "output folder (headless)"},
        {"trace", "FILE", "write the worker timeline as Chrome trace-event JSON (Perfetto, chrome://tracing)"},
    };
    return options;
}

std::vector<std::string> presetNames()
{
    std::vector<std::string> names;
    for (const auto& p : builtinPresetTexts())
        names.emplace_back(p.name);
    return names;
}

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& separator = " | ")
{
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i ? separator : "") + items[i];
    return out;
}

bool isKnownKey(const std::string& key)
{
    for (const auto& o : runOptions()) {
        if (o.name == key)
            return true;
    }
    return false;
}

/// The value as the user wrote it, for messages.
std::string shown(const Json& value)
{
    if (value.isString()) {
        std::string s = value.asString().substr(0, 60);
        for (char& c : s) {
            if (static_cast<unsigned char>(c) < 0x20)
                c = '?';
        }
        return "'" + s + (value.asString().size() > 60 ? "...'" : "'");
    }
    if (value.isNumber())
        return formatNumber(value.asNumber());
    return value.dump(-1).substr(0, 60);
}

bool parseDoubleText(const std::string& text, double& out)
{
    std::string_view s = text;
    if (!s.empty() && s.front() == '+')
        s.remove_prefix(1);
    if (s.empty())
        return false;
    // from_chars accepts "nan" and "inf": they are reported as not allowed rather than as non-numbers.
    const auto result = std::from_chars(s.data(), s.data() + s.size(), out);
    return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

double numberOf(const Json& value, const std::string& origin, const std::string& allowed)
{
    if (value.isNumber())
        return value.asNumber();
    double out = 0.0;
    if (value.isString() && parseDoubleText(value.asString(), out))
        return out;
    throw SgdError(origin + ": " + shown(value) + " is not a number; " + allowed);
}

std::int64_t integerOf(const Json& value, const std::string& origin, std::int64_t lo, std::int64_t hi)
{
    const std::string allowed = "use an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    const double d = numberOf(value, origin, allowed);
    if (!std::isfinite(d) || d != std::floor(d))
        throw SgdError(origin + ": " + shown(value) + " is not an integer; " + allowed);
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
        throw SgdError(origin + ": " + shown(value) + " is not allowed; " + allowed);
    return static_cast<std::int64_t>(d);
}

std::string stringOf(const Json& value, const std::string& origin)
{
    if (!value.isString())
        throw SgdError(origin + ": expected a string, got " + value.typeName());
    return value.asString();
}

template<typename T>
T choiceOf(const Json& value, const std::string& origin, const std::vector<std::pair<std::string, T>>& choices)
{
    const std::string text = stringOf(value, origin);
    std::vector<std::string> names;
    for (const auto& [name, v] : choices) {
        if (name == text)
            return v;
        names.push_back(name);
    }
    throw SgdError(origin + ": unknown value " + shown(value) + "; use " + joined(names));
}

std::vector<std::string> listOf(const Json& value, const std::string& origin)
{
    std::vector<std::string> items;
    if (value.isArray()) {
        for (const auto& item : value.asArray()) {
            if (item.isNumber())
                items.push_back(formatNumber(item.asNumber()));
            else
                items.push_back(stringOf(item, origin));
        }
        return items;
    }
    const std::string text = stringOf(value, origin);
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return items;
}

} // namespace

std::vector<int> parseLayers(const std::string& text, const std::string& origin)
{
    std::vector<int> layers;
    for (const auto& item : listOf(Json(text), origin))
        layers.push_back(static_cast<int>(integerOf(Json(item), origin + " (layer width)", 1, 1 << 20)));
    if (layers.size() < 2)
        throw SgdError(origin + ": '" + text + "' has " + std::to_string(layers.size())
            + " layer; give at least 2 widths (inputs and outputs), e.g. 1,5,1");
    if (layers.size() > 64)
        throw SgdError(origin + ": " + std::to_string(layers.size()) + " layers are too many; at most 64 are allowed");
    return layers;
}

Straggler parseStraggler(const std::string& text, const std::string& origin)
{
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos)
        throw SgdError(origin + ": '" + text + "' is not W:F (worker index, colon, slow-down factor), e.g. 0:4");
    Straggler s;
    s.worker = static_cast<int>(integerOf(Json(text.substr(0, colon)), origin + " (worker in '" + text + "')", 0, 255));
    s.factor
        = numberOf(Json(text.substr(colon + 1)), origin + " (factor in '" + text + "')", "use a number from 1 to 1000");
    if (!std::isfinite(s.factor) || s.factor < 1 || s.factor > 1000)
        throw SgdError(origin + ": factor in '" + text + "' is not allowed; use a number from 1 to 1000");
    return s;
}

void ConfigBuilder::setValue(const std::string& key, Json value, const std::string& origin, bool append)
{
    if (!isKnownKey(key))
        throw SgdError(origin + ": unknown option; see --help for the list");
    auto it = m_settings.find(key);
    if (append && it != m_settings.end() && it->second.origin == origin && it->second.value.isArray()) {
        it->second.value.push(std::move(value));
        return;
    }
    if (append)
        value = Json(Json::Array {std::move(value)});
    m_settings[key] = Setting {std::move(value), origin};
}

void ConfigBuilder::applyPreset(const std::string& name, const std::string& origin)
{
    for (const auto& p : builtinPresetTexts()) {
        if (name == p.name) {
            applyJson(Json::parse(p.json, "preset '" + name + "'"), "preset '" + name + "'");
            m_settings["preset"] = Setting {Json(name), origin};
            return;
        }
    }
    throw SgdError(origin + ": unknown preset '" + name + "'; use " + joined(presetNames()));
}

void ConfigBuilder::applyJson(const Json& object, const std::string& what)
{
    if (!object.isObject())
        throw SgdError(what + ": expected a JSON object of options, got " + object.typeName());
    for (const auto& [key, value] : object.asObject()) {
        const std::string origin = "field \"" + key + "\" of " + what;
        if (key == "config" || key == "headless" || key == "help")
            throw SgdError(origin + ": not allowed in a configuration file");
        if (!isKnownKey(key))
            throw SgdError(origin + ": unknown field; allowed fields are the options of --help without dashes");
        if (value.isNull())
            throw SgdError(origin + ": null is not a value; leave the field out instead");
        if (value.isObject() || value.isBool())
            throw SgdError(origin + ": expected a number or a string, got " + value.typeName());
        if (value.isArray() && key != "slow" && key != "layers" && key != "targets")
            throw SgdError(origin + ": expected a number or a string, got an array");
        setValue(key, value, origin, false);
    }
}

void ConfigBuilder::applyOption(const std::string& name, const std::string& value)
{
    const std::string origin = "--" + name;
    if (!isKnownKey(name))
        throw SgdError(origin + ": unknown option; see --help for the list");
    setValue(name, Json(value), origin, name == "slow");
}

RunConfig ConfigBuilder::resolve() const
{
    RunConfig c;
    auto get = [&](const std::string& key) -> const Setting* {
        const auto it = m_settings.find(key);
        return it == m_settings.end() ? nullptr : &it->second;
    };
    auto with = [&](const std::string& key, const std::function<void(const Json&, const std::string&)>& f) {
        if (const Setting* s = get(key))
            f(s->value, s->origin);
    };

    with("preset", [&](const Json& v, const std::string& o) { c.preset = stringOf(v, o); });
    with("mode", [&](const Json& v, const std::string& o) {
        c.mode = choiceOf<RunMode>(v, o, {{"sync", RunMode::Sync}, {"async", RunMode::Async}, {"both", RunMode::Both}});
    });
    with(
        "workers", [&](const Json& v, const std::string& o) { c.workers = static_cast<int>(integerOf(v, o, 1, 256)); });
    with(
        "batch", [&](const Json& v, const std::string& o) { c.batch = static_cast<int>(integerOf(v, o, 1, 1 << 30)); });
    with("accum", [&](const Json& v, const std::string& o) { c.accum = static_cast<int>(integerOf(v, o, 1, 4096)); });
    with(
        "chunk", [&](const Json& v, const std::string& o) { c.chunk = static_cast<int>(integerOf(v, o, 1, 1 << 30)); });
    with("steps", [&](const Json& v, const std::string& o) { c.steps = integerOf(v, o, 1, 1'000'000'000'000LL); });
    with("epochs", [&](const Json& v, const std::string& o) {
        c.epochs = numberOf(v, o, "use a number of epochs above 0");
        if (!std::isfinite(c.epochs) || c.epochs <= 0 || c.epochs > 1e6)
            throw SgdError(o + ": " + shown(v) + " is not allowed; use a number of epochs above 0 (at most 1e6)");
    });
    with("lr", [&](const Json& v, const std::string& o) {
        c.lr = numberOf(v, o, "use a finite number above 0");
        if (!std::isfinite(c.lr) || c.lr <= 0 || c.lr > 1e6)
            throw SgdError(o + ": " + shown(v) + " is not allowed; use a finite number above 0 (at most 1e6)");
    });
    with("momentum", [&](const Json& v, const std::string& o) {
        c.momentum = numberOf(v, o, "use a number from 0 up to (not including) 1");
        if (!std::isfinite(c.momentum) || c.momentum < 0 || c.momentum >= 1)
            throw SgdError(o + ": " + shown(v) + " is not allowed; use a number from 0 up to (not including) 1");
    });
    with("seed", [&](const Json& v, const std::string& o) {
        c.seed = static_cast<std::uint64_t>(integerOf(v, o, 0, (1LL << 53)));
    });
    with("layers", [&](const Json& v, const std::string& o) {
        const auto items = listOf(v, o);
        std::string text;
        for (std::size_t i = 0; i < items.size(); ++i)
            text += (i ? "," : "") + items[i];
        c.layers = parseLayers(text, o);
    });
    with("activation", [&](const Json& v, const std::string& o) {
        c.activation = choiceOf<Activation>(v, o,
            {{"tanh", Activation::Tanh}, {"relu", Activation::Relu}, {"sigmoid", Activation::Sigmoid},
                {"identity", Activation::Identity}});
    });
    with("loss", [&](const Json& v, const std::string& o) {
        c.loss = choiceOf<LossKind>(
            v, o, {{"mse", LossKind::MeanSquaredError}, {"cross-entropy", LossKind::SoftmaxCrossEntropy}});
    });
    with("weight-init", [&](const Json& v, const std::string& o) {
        c.weightInit = choiceOf<WeightInit>(
            v, o, {{"normal", WeightInit::StandardNormal}, {"he", WeightInit::He}, {"glorot", WeightInit::Glorot}});
    });
    with("dataset", [&](const Json& v, const std::string& o) {
        c.dataset = choiceOf<std::string>(v, o,
            {{"parabola", "parabola"}, {"blobs", "blobs"}, {"fashion-mnist", "fashion-mnist"}, {"idx", "idx"},
                {"csv", "csv"}});
    });
    with("samples", [&](const Json& v, const std::string& o) { c.samples = integerOf(v, o, 1, 1LL << 32); });
    with("data", [&](const Json& v, const std::string& o) {
        c.data = stringOf(v, o);
        if (c.data.empty())
            throw SgdError(o + ": an empty path is not allowed");
    });
    with("csv-header", [&](const Json& v, const std::string& o) {
        c.csvHeader = choiceOf<std::string>(v, o, {{"auto", "auto"}, {"yes", "yes"}, {"no", "no"}});
    });
    with("targets", [&](const Json& v, const std::string& o) {
        c.targets = listOf(v, o);
        for (const auto& t : c.targets) {
            if (t.empty())
                throw SgdError(o + ": an empty column name is not allowed");
        }
    });
    with("slow", [&](const Json& v, const std::string& o) {
        for (const auto& item : listOf(v, o))
            c.slow.push_back(parseStraggler(item, o));
    });
    with("jitter", [&](const Json& v, const std::string& o) {
        c.jitter = numberOf(v, o, "use a number from 0 to 4");
        if (!std::isfinite(c.jitter) || c.jitter < 0 || c.jitter > 4)
            throw SgdError(o + ": " + shown(v) + " is not allowed; use a number from 0 to 4");
    });
    with("async-apply", [&](const Json& v, const std::string& o) {
        c.asyncApply = choiceOf<AsyncApply>(v, o, {{"lock", AsyncApply::Lock}, {"lockfree", AsyncApply::LockFree}});
    });
    with("async-lr", [&](const Json& v, const std::string& o) {
        c.asyncLr = choiceOf<AsyncLearningRate>(
            v, o, {{"constant", AsyncLearningRate::Constant}, {"staleness", AsyncLearningRate::Staleness}});
    });
    with("eval-every",
        [&](const Json& v, const std::string& o) { c.evalEvery = integerOf(v, o, 0, 1'000'000'000'000LL); });
    auto path = [&](const char* key, std::string& field) {
        with(key, [&](const Json& v, const std::string& o) {
            field = stringOf(v, o);
            if (field.empty())
                throw SgdError(o + ": an empty path is not allowed");
        });
    };
    path("init", c.init);
    path("save-params", c.saveParams);
    path("out", c.out);
    path("trace", c.trace);

    if (get("steps") && get("epochs")) {
        // The later source wins when they come from different places (a preset's epochs, the user's steps).
        const Setting* steps = get("steps");
        const Setting* epochs = get("epochs");
        const bool stepsFromUser = steps->origin.rfind("--", 0) == 0;
        const bool epochsFromUser = epochs->origin.rfind("--", 0) == 0;
        if (stepsFromUser == epochsFromUser)
            throw SgdError(steps->origin + ": cannot be combined with " + epochs->origin + "; give one of them");
        if (stepsFromUser)
            c.epochs = 0;
        else
            c.steps = 0;
    }
    for (const auto& s : c.slow) {
        if (s.worker >= c.workers)
            throw SgdError(get("slow")->origin + ": worker " + std::to_string(s.worker) + " does not exist; with "
                + std::to_string(c.workers) + " workers they are 0 to " + std::to_string(c.workers - 1));
    }
    return c;
}

std::string toString(RunMode m)
{
    switch (m) {
    case RunMode::Sync:
        return "sync";
    case RunMode::Async:
        return "async";
    case RunMode::Both:
        return "both";
    }
    return "?";
}

Json toJson(const RunConfig& c)
{
    Json j = Json::object();
    if (!c.preset.empty())
        j.set("preset", c.preset);
    j.set("mode", toString(c.mode));
    j.set("workers", c.workers);
    j.set("batch", c.batch);
    j.set("accum", c.accum);
    j.set("chunk", c.chunk);
    j.set("steps", c.steps);
    j.set("lr", c.lr);
    j.set("momentum", c.momentum);
    j.set("seed", c.seed);
    std::string layers;
    for (std::size_t i = 0; i < c.layers.size(); ++i)
        layers += (i ? "," : "") + std::to_string(c.layers[i]);
    j.set("layers", layers);
    j.set("activation", toString(c.activation));
    j.set("loss", toString(c.loss));
    j.set("weight-init", toString(c.weightInit));
    j.set("dataset", c.dataset);
    if (c.samples > 0)
        j.set("samples", c.samples);
    if (!c.data.empty())
        j.set("data", c.data);
    Json slow = Json::array();
    for (const auto& s : c.slow)
        slow.push(Json(std::to_string(s.worker) + ":" + formatNumber(s.factor)));
    j.set("slow", slow);
    j.set("jitter", c.jitter);
    j.set("async-apply", c.asyncApply == AsyncApply::Lock ? "lock" : "lockfree");
    j.set("async-lr", c.asyncLr == AsyncLearningRate::Constant ? "constant" : "staleness");
    j.set("eval-every", c.evalEvery);
    if (!c.init.empty())
        j.set("init", c.init);
    return j;
}

} // namespace sgdscope
