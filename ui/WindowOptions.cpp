#include "ui/WindowOptions.h"

#include "ui/Controller.h"
#include "ui/ModeChoice.h"
#include "ui/TrainingSession.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/EngineShapes.h"
#include "core/run/Options.h"

#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <map>
#include <set>

namespace sgdscope::ui {

namespace {

/// Why an option cannot apply to the window ("" if it can).
std::string windowRefusal(const std::string& name)
{
    static const std::map<std::string, std::string> refusals {
        {"out",
            "the window shows its results (File > Save run as... writes them as a run folder); --out is for "
            "--headless runs"},
        {"progress", "streams a headless run's figures to a window; the window has them already"},
        {"trace", "the window's timeline shows the workers' spans; a trace file is written by --headless runs"},
        {"save-params", "final parameters are written by --headless runs; the window trains until you stop it"},
        {"steps", "the window trains until you pause or reset; a run of a set length is a --headless run"},
        {"epochs", "the window trains until you pause or reset; a run of a set length is a --headless run"},
        {"lr-schedule",
            "the window trains until you pause or reset, so it has no run's end to schedule the learning rate to (it "
            "keeps lr constant); a schedule is for --headless runs"},
        {"eval-every",
            "the window evaluates every epoch or every 200 batches, whichever is more; --eval-every is for "
            "--headless runs"},
    };
    const auto it = refusals.find(name);
    return it == refusals.end() ? std::string() : it->second;
}

/// A --config file's value as command-line text (the option table parses both the same way): a list is its
/// items joined by commas ("layers": [2, 16, 1] is --layers 2,16,1), except for a repeatable option, whose
/// items are given one by one ("slow": ["0:2", "1:3"] is --slow 0:2 --slow 1:3).
std::vector<std::string> asTexts(const std::string& name, const Json& value)
{
    auto text = [](const Json& item) { return item.is_string() ? item.get<std::string>() : dumpJson(item, -1); };
    if (!value.is_array())
        return {text(value)};
    std::vector<std::string> items;
    for (const Json& item : value)
        items.push_back(text(item));
    const OptionSpec* spec = findOption(name);
    if (spec && spec->repeatable)
        return items;
    std::string joined;
    for (std::size_t i = 0; i < items.size(); ++i)
        joined += (i ? "," : "") + items[i];
    return {joined};
}

QString absolutePath(const std::string& path)
{
    return QFileInfo(QString::fromStdString(path)).absoluteFilePath();
}

QString shellQuoted(const QString& text)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:,=+@%-]+$"));
    if (plain.match(text).hasMatch())
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QString exact(double value)
{
    return QString::number(value, 'g', 17);
}

} // namespace

SessionSettings windowSettings(const std::vector<std::pair<std::string, std::string>>& commandLine,
    const std::string* configText, const std::string& configName)
{
    // Every option in order, the --config file's first (the command line overrides it), each with its origin.
    struct Given
    {
        std::string name;
        std::string value;
        std::string origin;
    };
    std::vector<Given> given;
    Json config;
    const std::string configWhat = "config file '" + configName + "'";
    if (configText) {
        config = parseJson(*configText, configWhat);
        if (!config.is_object())
            throw SgdError(configWhat + ": expected a JSON object of options, got " + typeName(config));
        for (const auto& [key, value] : config.items()) {
            for (const std::string& text : asTexts(key, value))
                given.push_back({key, text, "field \"" + key + "\" of " + configWhat});
        }
    }
    for (const auto& [name, value] : commandLine)
        given.push_back({name, value, "--" + name});
    for (const Given& g : given) {
        if (const std::string why = windowRefusal(g.name); !why.empty())
            throw SgdError(g.origin + ": " + why);
    }

    // The same checks as a headless run with these options: the preset, the file, then the command line.
    std::string preset = "parabola";
    std::string presetOrigin = "--preset";
    for (const Given& g : given) {
        if (g.name == "preset") {
            preset = g.value;
            presetOrigin = g.origin;
        }
    }
    ConfigBuilder builder;
    builder.applyPreset(preset, presetOrigin);
    if (config.is_object()) {
        Json rest = config;
        rest.erase("preset");
        builder.applyJson(rest, configWhat);
    }
    for (const auto& [name, value] : commandLine) {
        if (name != "preset")
            builder.applyOption(name, value);
    }
    const RunConfig c = builder.resolve();

    // The last source of each option wins, as in ConfigBuilder; --slow collects all of the last source's.
    std::map<std::string, std::string> lastOrigin;
    for (const Given& g : given)
        lastOrigin[g.name] = g.origin;
    std::set<std::string> names;
    for (const auto& [name, origin] : lastOrigin)
        names.insert(name);

    SessionSettings s;
    s.preset = QString::fromStdString(c.preset.empty() ? preset : c.preset);
    s.seed = c.seed;
    s.engine = QString::fromStdString(nameOf(engineNames, c.engine));
    if (names.count("cluster"))
        s.cluster = QString::fromStdString(nameOf(clusterNames, c.cluster));
    if (names.count("topology"))
        s.topology = QString::fromStdString(nameOf(topologyNames, c.topology));
    if (!c.platform.empty())
        s.platformFile = absolutePath(c.platform);
    const int mostWorkers = maxWindowWorkers(s.engine);
    if (names.count("workers")) {
        if (c.workers > mostWorkers)
            throw SgdError(lastOrigin["workers"] + ": " + std::to_string(c.workers)
                + " is more than the window offers on " + "the " + s.engine.toStdString() + " engine ("
                + std::to_string(mostWorkers) + "); use --headless for more");
        s.workers = c.workers;
    }
    auto checkWindowRange = [&](const char* name, double value) {
        const auto [low, high] = Controller::windowRange(name);
        const int sliderEnd = option(name).windowMax;
        const double most = sliderEnd > 0 ? std::min<double>(high, sliderEnd) : high;
        if (value < low || value > most)
            throw SgdError(lastOrigin[name] + ": " + formatNumber(value)
                + " is outside what the window's control offers (" + formatNumber(low) + " to " + formatNumber(most)
                + "); use --headless for it");
    };
    if (names.count("batch"))
        s.batch = c.batch;
    if (names.count("batch-per-worker")) {
        s.batch = c.batchPerWorker;
        s.batchPerWorker = true;
    }
    if (names.count("accum")) {
        checkWindowRange("accum", c.accum);
        s.accum = c.accum;
    }
    if (names.count("lr")) {
        checkWindowRange("lr", c.lr);
        s.learningRate = c.lr;
    }
    if (names.count("seed"))
        checkWindowRange("seed", static_cast<double>(c.seed));
    if (names.count("mode")) {
        // Two columns, one mode each (ConfigBuilder has refused unknown and repeated modes).
        if (c.modes.size() != modeCount)
            throw SgdError(lastOrigin["mode"] + ": the window shows two modes side by side, one per column, and "
                + c.modesText() + " is " + std::to_string(c.modes.size()) + (c.modes.size() == 1 ? " mode" : " modes")
                + "; give two, e.g. --mode sync,ssp (both is sync,async); one mode alone is a --headless run");
        for (int col = 0; col < modeCount; ++col)
            s.modes.names[static_cast<std::size_t>(col)]
                = QString::fromUtf8(modeName(c.modes[static_cast<std::size_t>(col)]));
    }
    // The knobs of the modes shown (ConfigBuilder has refused those of modes not shown).
    if (names.count("ssp-bound"))
        checkWindowRange("ssp-bound", static_cast<double>(c.sspBound));
    if (names.count("local-steps"))
        checkWindowRange("local-steps", c.localSteps);
    if (names.count("dc-lambda"))
        checkWindowRange("dc-lambda", c.dcLambda);
    s.modes.sspBound = static_cast<int>(c.sspBound);
    s.modes.backupWorkers = c.backupWorkers;
    s.modes.localSteps = c.localSteps;
    s.modes.dcLambda = c.dcLambda;
    if (names.count("jitter"))
        s.jitter = c.jitter;
    if (names.count("async-apply"))
        s.lockFree = c.asyncApply == AsyncApply::LockFree;
    if (names.count("async-lr")) // (ConfigBuilder has refused it without a pushing mode shown)
        s.pushLearningRate = QString::fromStdString(nameOf(asyncLearningRateNames, c.asyncLr));
    if (names.count("target-accuracy"))
        s.targetAccuracy = c.targetAccuracy;
    if (names.count("target-loss"))
        s.targetLoss = c.targetLoss;
    bool slowOnPanel = false;
    if (names.count("slow") && c.slow.size() == 1) {
        const auto [low, high] = Controller::windowRange("slow");
        const Straggler& g = c.slow.front();
        if (g.factor >= low && g.factor <= high) {
            s.slowWorker = g.worker;
            s.slowFactor = g.factor;
            slowOnPanel = true;
        }
    }

    // The rest are the session's run options, in order, paths made absolute (children and copied command
    // lines may run elsewhere).
    static const std::set<std::string> onPanel {"preset", "seed", "engine", "cluster", "platform", "topology",
        "workers", "batch", "batch-per-worker", "accum", "lr", "jitter", "async-apply", "async-lr", "target-accuracy",
        "target-loss", "mode", "ssp-bound", "backup-workers", "local-steps", "dc-lambda"};
    for (const Given& g : given) {
        if (onPanel.count(g.name) || g.origin != lastOrigin[g.name] || (g.name == "slow" && slowOnPanel))
            continue;
        const OptionSpec& spec = option(g.name);
        const QString value = spec.pathValue ? absolutePath(g.value) : QString::fromStdString(g.value);
        s.options.append({QString::fromStdString(g.name), value});
    }
    return s;
}

void checkSessionOptions(const SessionSettings& settings)
{
    (void)sessionConfig(settings);
}

QStringList headlessArguments(const SessionSettings& s, std::int64_t syncUpdates, const QString& out)
{
    const bool mpi = s.engine == QStringLiteral("mpi");
    QStringList args {QStringLiteral("--headless"), QStringLiteral("--out"), out, QStringLiteral("--preset"), s.preset};
    for (const auto& [name, value] : s.options)
        args << QStringLiteral("--") + name << value;
    if (s.engine == QStringLiteral("sim")) {
        args << QStringLiteral("--engine") << QStringLiteral("sim");
        if (s.platformFile.isEmpty())
            args << QStringLiteral("--cluster") << s.cluster;
        else
            args << QStringLiteral("--platform") << s.platformFile;
        if (s.topology != QStringLiteral("ps") && teamWideColumn(s))
            args << QStringLiteral("--topology") << s.topology;
    } else if (mpi) {
        args << QStringLiteral("--engine") << QStringLiteral("mpi");
    }
    if (!mpi)
        args << QStringLiteral("--workers") << QString::number(s.workers); // an MPI job's are its processes
    args << QStringLiteral("--seed") << QString::number(s.seed);
    if (s.batch > 0)
        args << (s.batchPerWorker ? QStringLiteral("--batch-per-worker") : QStringLiteral("--batch"))
             << QString::number(s.batch);
    if (s.accum > 1)
        args << QStringLiteral("--accum") << QString::number(s.accum);
    if (s.learningRate > 0)
        args << QStringLiteral("--lr") << exact(s.learningRate);
    // The window keeps lr constant (it trains until stopped): a preset's schedule (fashion-cnn's linear) is turned
    // off, so that the command and a simulated column's child run do what the window does.
    try {
        ConfigBuilder preset;
        preset.applyPreset(s.preset.toStdString(), "--preset");
        if (preset.resolve().lrSchedule != LrSchedule::Constant)
            args << QStringLiteral("--lr-schedule") << QStringLiteral("constant");
    } catch (const SgdError&) {
        // (a preset that does not resolve is refused where the run is made)
    }
    // The columns' modes (an MPI job of 1 process runs those without a parameter server; with none, it says
    // why) and the knobs of those modes only (a knob of a mode not run is refused).
    QList<int> columns {LeftColumn, RightColumn};
    if (mpi && !mpiRunnableColumns(s).isEmpty())
        columns = mpiRunnableColumns(s);
    QStringList modes;
    for (const int c : columns)
        modes << s.modes.names[static_cast<std::size_t>(c)];
    // A mode's workers: an MPI job's modes with a parameter server have one fewer (the server is rank 0), and
    // the straggler must exist in every mode.
    int fewestWorkers = s.workers;
    if (mpi && s.workers >= 2)
        for (const int c : columns)
            fewestWorkers = std::min(fewestWorkers, mpiColumnWorkers(s.modes, columns, c, s.workers));
    if (s.slowWorker >= 0 && s.slowFactor > 1.0 && s.slowWorker < fewestWorkers)
        args << QStringLiteral("--slow") << QStringLiteral("%1:%2").arg(s.slowWorker).arg(exact(s.slowFactor));
    if (s.jitter > 0)
        args << QStringLiteral("--jitter") << exact(s.jitter);
    // Lock-free applies to async and ssp on threads; dc-asgd keeps its lock (the window's too: one run of
    // both cannot be written as one headless command, which then has the lock).
    const bool lockFreeMode = modes.contains(QStringLiteral("async")) || modes.contains(QStringLiteral("ssp"));
    if (s.lockFree && s.engine == QStringLiteral("threads") && lockFreeMode
        && !modes.contains(QStringLiteral("dc-asgd")))
        args << QStringLiteral("--async-apply") << QStringLiteral("lockfree");
    // The push rule applies to the pushing modes run (headless refuses it without one); scaled is the default.
    if (s.pushLearningRate != QStringLiteral("scaled")
        && std::any_of(modes.begin(), modes.end(), [](const QString& m) { return modeNamed(m) && !syncLikeMode(m); }))
        args << QStringLiteral("--async-lr") << s.pushLearningRate;
    if (modes != QStringList {QStringLiteral("sync"), QStringLiteral("async")}) // (both: the default)
        args << QStringLiteral("--mode") << modes.join(QLatin1Char(','));
    for (const QString& name : modes) {
        const auto m = modeNamed(name);
        if (const char* knob = m ? knobOption(*m) : nullptr)
            args << QStringLiteral("--") + QString::fromUtf8(knob) << knobText(s.modes, *m);
    }
    if (syncUpdates > 0)
        args << QStringLiteral("--steps") << QString::number(syncUpdates);
    return args;
}

QString headlessCommand(
    const SessionSettings& settings, std::int64_t syncUpdates, const QString& out, const QString& program)
{
    QStringList words;
    if (settings.engine == QStringLiteral("mpi"))
        words << QStringLiteral("mpirun") << mpirunArguments(settings, syncUpdates, out, program);
    else
        words << program << headlessArguments(settings, syncUpdates, out);
    QStringList quoted;
    for (const QString& w : words)
        quoted << shellQuoted(w);
    return quoted.join(QLatin1Char(' '));
}

QStringList mpirunArguments(
    const SessionSettings& settings, std::int64_t syncUpdates, const QString& out, const QString& program)
{
    // --bind-to none: mpirun would pin every process to one core, so that two of them share it when they
    // outnumber the cores.
    QStringList args {QStringLiteral("--oversubscribe"), QStringLiteral("--bind-to"), QStringLiteral("none"),
        QStringLiteral("-np"), QString::number(settings.workers)};
    if (!settings.hostFile.isEmpty())
        args << QStringLiteral("--hostfile") << settings.hostFile;
    args << program;
    args += headlessArguments(settings, syncUpdates, out);
    return args;
}

RunConfig headlessConfig(const SessionSettings& settings, std::int64_t syncUpdates)
{
    const QStringList args = headlessArguments(settings, syncUpdates, QStringLiteral("run"));
    ConfigBuilder builder;
    builder.applyPreset(settings.preset.toStdString(), "--preset");
    for (qsizetype i = 0; i + 1 < args.size(); ++i) {
        if (args[i] == QStringLiteral("--headless") || args[i] == QStringLiteral("--preset")) {
            i += args[i] == QStringLiteral("--preset") ? 1 : 0;
            continue;
        }
        builder.applyOption(args[i].mid(2).toStdString(), args[i + 1].toStdString());
        ++i;
    }
    return builder.resolve();
}

QString sessionDataName(const SessionSettings& settings)
{
    const QString data = settings.option(QStringLiteral("data"));
    if (!data.isEmpty())
        return QStringLiteral("data: %1").arg(QFileInfo(data).fileName());
    const QString dataset = settings.option(QStringLiteral("dataset"));
    if (!dataset.isEmpty())
        return QStringLiteral("data: %1").arg(dataset);
    return settings.preset;
}

} // namespace sgdscope::ui
