// Command line, --config files and presets: precedence, and a clear error for every bad value.
#include "app/CommandLine.h"
#include "core/common/Error.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/Options.h"
#include "core/run/study/ReadyStudies.h"
#include "core/run/study/StudySpec.h"

#include <QFile>
#include <QRegularExpression>

#include <map>

#include <QTest>

using namespace sgdscope;

namespace {
RunConfig build(const std::vector<std::string>& args, const std::string* config = nullptr)
{
    return buildRunConfig(parseCommandLine(args), config);
}

QString errorOf(const std::vector<std::string>& args, const std::string* config = nullptr)
{
    try {
        build(args, config);
    } catch (const SgdError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}
} // namespace

class TestConfig : public QObject
{
    Q_OBJECT
private slots:
    void defaultsToTheParabolaPreset()
    {
        const RunConfig c = build({});
        QCOMPARE(c.preset, std::string("parabola"));
        QVERIFY(c.dataset == DatasetKind::Parabola);
        QCOMPARE(c.steps, std::int64_t(2000));
        QCOMPARE(c.lr, 0.01);
        QCOMPARE(c.layers, (std::vector<int> {1, 5, 1}));
        QVERIFY((c.modes == std::vector<Mode> {Mode::Sync, Mode::Async}));
    }

    void precedencePresetThenConfigThenOptions()
    {
        const std::string config = R"({"preset": "fashion-mnist", "lr": 0.02, "workers": 3})";
        const RunConfig c = build({"--workers=2", "--config", "run.json"}, &config);
        QCOMPARE(c.preset, std::string("fashion-mnist"));
        QCOMPARE(c.lr, 0.02); // the file over the preset
        QCOMPARE(c.workers, 2); // the command line over the file
        QCOMPARE(c.batch, 256); // the preset's
    }

    // A flag's on and off in a config file may be JSON's true and false ("dc-adaptive": true), as its words.
    void flagsTakeJsonBooleans()
    {
        for (const bool on : {true, false}) {
            const std::string config
                = std::string(R"({"mode": "dc-asgd", "dc-adaptive": )") + (on ? "true" : "false") + "}";
            const RunConfig c = build({"--config", "run.json"}, &config);
            QCOMPARE(c.dcAdaptive, on);
        }
        const std::string words = R"({"mode": "dc-asgd", "dc-adaptive": "on"})";
        QVERIFY(build({"--config", "run.json"}, &words).dcAdaptive);
    }

    void userStepsReplacePresetEpochs()
    {
        const RunConfig c = build({"--preset", "fashion-mnist", "--steps", "10"});
        QCOMPARE(c.steps, std::int64_t(10));
        QCOMPARE(c.epochs, 0.0);
        QVERIFY(errorOf({"--steps", "10", "--epochs", "2"}).contains(QStringLiteral("cannot be combined")));
    }

    void repeatedSlowOptions()
    {
        const RunConfig c = build({"--workers", "4", "--slow", "0:4", "--slow", "3:2.5"});
        QCOMPARE(c.slow.size(), std::size_t(2));
        QCOMPARE(c.slow[1].worker, 3);
        QCOMPARE(c.slow[1].factor, 2.5);
        const std::string config = R"({"workers": 2, "slow": ["1:3"]})";
        QCOMPARE(build({"--config", "c.json"}, &config).slow.front().factor, 3.0);
    }

    void badValues_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("needle");
        auto row = [](const char* name, QStringList args, const char* needle) {
            QTest::addRow("%s", name) << args << QString::fromLatin1(needle);
        };
        row("workers-zero", {QStringLiteral("--workers"), QStringLiteral("0")},
            "--workers: '0' is not allowed; use an integer from 1 to 4096");
        row("workers-negative", {QStringLiteral("--workers=-3")}, "--workers: '-3' is not allowed");
        row("workers-text", {QStringLiteral("--workers"), QStringLiteral("many")}, "--workers: 'many' is not a number");
        row("workers-fraction", {QStringLiteral("--workers"), QStringLiteral("2.5")},
            "--workers: '2.5' is not an integer");
        row("batch-zero", {QStringLiteral("--batch"), QStringLiteral("0")}, "--batch: '0' is not allowed");
        row("accum-zero", {QStringLiteral("--accum"), QStringLiteral("0")}, "--accum: '0' is not allowed");
        row("steps-zero", {QStringLiteral("--steps"), QStringLiteral("0")}, "--steps: '0' is not allowed");
        row("lr-nan", {QStringLiteral("--lr"), QStringLiteral("nan")},
            "--lr: 'nan' is not allowed; use a finite number above 0");
        row("lr-inf", {QStringLiteral("--lr"), QStringLiteral("inf")}, "--lr: 'inf' is not allowed");
        row("lr-negative", {QStringLiteral("--lr"), QStringLiteral("-0.1")}, "--lr: '-0.1' is not allowed");
        row("lr-text", {QStringLiteral("--lr"), QStringLiteral("fast")}, "--lr: 'fast' is not a number");
        row("momentum-one", {QStringLiteral("--momentum"), QStringLiteral("1")}, "--momentum: '1' is not allowed");
        row("mode", {QStringLiteral("--mode"), QStringLiteral("hybrid")},
            "--mode: unknown mode 'hybrid'; use a list of sync | async | ssp | backup | local-sgd | dc-asgd, or both "
            "(sync,async)");
        row("preset", {QStringLiteral("--preset"), QStringLiteral("mnist")}, "--preset: unknown preset 'mnist'");
        row("activation", {QStringLiteral("--activation"), QStringLiteral("gelu")},
            "--activation: unknown value 'gelu'");
        row("dataset", {QStringLiteral("--dataset"), QStringLiteral("cifar")}, "--dataset: unknown value 'cifar'");
        row("layers-zero", {QStringLiteral("--layers"), QStringLiteral("1,0,1")},
            "--layers (layer width): '0' is not allowed");
        row("layers-one", {QStringLiteral("--layers"), QStringLiteral("3")}, "--layers: '3' has 1 layer");
        row("slow-syntax", {QStringLiteral("--slow"), QStringLiteral("4")}, "--slow: '4' is not W:F");
        row("slow-factor", {QStringLiteral("--slow"), QStringLiteral("0:0.5")},
            "--slow: factor in '0:0.5' is not allowed");
        row("slow-worker",
            {QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--slow"), QStringLiteral("5:2")},
            "--slow: worker 5 does not exist");
        row("jitter", {QStringLiteral("--jitter"), QStringLiteral("-1")}, "--jitter: '-1' is not allowed");
        row("samples", {QStringLiteral("--samples"), QStringLiteral("0")}, "--samples: '0' is not allowed");
        row("eval-every", {QStringLiteral("--eval-every"), QStringLiteral("-2")}, "--eval-every: '-2' is not allowed");
        row("chunk", {QStringLiteral("--chunk"), QStringLiteral("0")}, "--chunk: '0' is not allowed");
        row("unknown", {QStringLiteral("--speed"), QStringLiteral("9")}, "--speed: unknown option");
        row("missing-value", {QStringLiteral("--workers")}, "--workers: needs a value");
        row("flag-value", {QStringLiteral("--headless=yes")}, "--headless: takes no value");
        row("positional", {QStringLiteral("run")}, "'run' is not an option");
        row("empty-out", {QStringLiteral("--out=")}, "--out: an empty path is not allowed");
    }

    void badValues()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, needle);
        std::vector<std::string> list;
        for (const QString& a : args)
            list.push_back(a.toStdString());
        const QString message = errorOf(list);
        QVERIFY2(message.contains(needle), qPrintable(QStringLiteral("got \"%1\"").arg(message)));
        QVERIFY(!message.contains(QLatin1Char('\n')));
    }

    void everyOptionRoundTripsThroughCommandLineAndJson()
    {
        // One value for every option (with what it needs to take effect), given on the command line and in a
        // --config file: both give the same configuration, and the value is not the default.
        const std::string csv = SGDSCOPE_TEST_DATA "/regression.csv";
        const std::string init = SGDSCOPE_TEST_DATA "/oracle_init_seed0.safetensors";
        struct Sample
        {
            std::string value;
            std::map<std::string, std::string> context;
        };
        const std::string platform = SGDSCOPE_TEST_DATA "/cluster-4hosts.xml";
        const std::map<std::string, Sample> samples = {{"preset", {"blobs", {}}}, {"mode", {"async", {}}},
            {"engine", {"sim", {}}}, {"cluster", {"wan", {{"engine", "sim"}}}},
            {"platform", {platform, {{"engine", "sim"}}}}, {"placement", {"pack", {{"engine", "sim"}}}},
            {"slow-fraction", {"0.25:3", {}}}, {"rotating-straggler", {"2", {}}}, {"heavy-tail", {"1.5", {}}},
            {"workers", {"3", {}}}, {"batch", {"17", {}}}, {"batch-per-worker", {"5", {{"workers", "3"}}}},
            {"accum", {"2", {}}}, {"chunk", {"5", {}}}, {"steps", {"7", {}}}, {"epochs", {"2.5", {}}},
            {"lr", {"0.125", {}}}, {"momentum", {"0.5", {}}}, {"seed", {"42", {}}}, {"layers", {"1,7,1", {}}},
            {"model", {"conv4x3x3p1,maxpool2,dense10", {}}}, {"activation", {"relu", {}}},
            {"loss", {"cross-entropy", {}}}, {"weight-init", {"glorot", {}}}, {"dataset", {"blobs", {}}},
            {"samples", {"99", {}}}, {"data", {csv, {{"dataset", "csv"}}}},
            {"csv-header", {"yes", {{"dataset", "csv"}, {"data", csv}}}},
            {"targets", {"y", {{"dataset", "csv"}, {"data", csv}}}}, {"slow", {"1:2.5", {{"workers", "2"}}}},
            {"jitter", {"0.25", {}}}, {"async-apply", {"lockfree", {}}}, {"async-lr", {"staleness", {}}},
            {"lr-schedule", {"linear", {}}}, {"topology", {"tree", {{"engine", "sim"}, {"mode", "sync"}}}},
            {"ssp-bound", {"5", {{"mode", "ssp"}}}}, {"backup-workers", {"2", {{"mode", "backup"}}}},
            {"local-steps", {"4", {{"mode", "local-sgd"}}}}, {"dc-lambda", {"0.5", {{"mode", "dc-asgd"}}}},
            {"dc-adaptive", {"on", {{"mode", "dc-asgd"}}}}, {"eval-every", {"3", {}}}, {"progress", {"-", {}}},
            {"peer-timeout", {"20", {{"engine", "mpi"}}}}, {"target-accuracy", {"0.9", {{"preset", "blobs"}}}},
            {"target-loss", {"0.05", {}}}, {"init", {init, {}}}, {"save-params", {"p.safetensors", {}}},
            {"out", {"results", {}}}, {"trace", {"trace.json", {}}}};
        const RunConfig defaults = build({});
        for (const OptionSpec& spec : optionTable()) {
            const auto it = samples.find(spec.name);
            QVERIFY2(it != samples.end(),
                qPrintable(QStringLiteral("no sample value for --%1").arg(QString::fromStdString(spec.name))));
            std::vector<std::string> args;
            Json config = Json::object();
            for (const auto& [name, value] : it->second.context) {
                args.insert(args.end(), {"--" + name, value});
                config[name] = value;
            }
            args.insert(args.end(), {"--" + spec.name, it->second.value});
            const bool numeric = spec.type == OptionType::Integer || spec.type == OptionType::Number;
            config[spec.name] = numeric ? Json(std::stod(it->second.value)) : Json(it->second.value);
            const std::string text = config.dump();
            const RunConfig fromCommandLine = build(args);
            const RunConfig fromJson = build({"--config", "c.json"}, &text);
            const QString name = QString::fromStdString(spec.name);
            QVERIFY2(spec.load(fromCommandLine) == spec.load(fromJson), qPrintable(name));
            QVERIFY2(spec.load(fromCommandLine) != spec.load(defaults), qPrintable(name));
        }
    }

    void idxDataTakesCrossEntropyOverAPresetsLoss()
    {
        // A folder is IDX data, whose labels are classes: parabola's mse does not follow it there ...
        const RunConfig c = build({"--data", SGDSCOPE_TEST_DATA});
        QVERIFY(c.dataset == DatasetKind::Idx);
        QVERIFY(c.loss == LossKind::SoftmaxCrossEntropy);
        QVERIFY(QString::fromStdString(c.originOf("loss")).contains(QStringLiteral("IDX labels are classes")));
        // ... but the user's own loss stays theirs, and CSV data keeps the preset's (its targets may be numbers).
        QVERIFY(build({"--data", SGDSCOPE_TEST_DATA, "--loss", "mse"}).loss == LossKind::MeanSquaredError);
        QVERIFY(build({"--data", SGDSCOPE_TEST_DATA "/regression.csv"}).loss == LossKind::MeanSquaredError);
    }

    void batchPerWorkerIsWorkersTimesB()
    {
        // Weak scaling: the batch is P x B, replacing the preset's (fashion-mnist's 256), never the user's.
        const RunConfig c = build({"--preset", "fashion-mnist", "--workers", "3", "--batch-per-worker", "40"});
        QCOMPARE(c.batch, 120);
        QCOMPARE(c.batchPerWorker, 40);
        QCOMPARE(build({"--workers", "8", "--batch-per-worker", "2"}).batch, 16);
        QVERIFY(errorOf({"--batch", "8", "--batch-per-worker", "2"})
                    .contains(QStringLiteral("--batch-per-worker: cannot be combined with --batch")));
        QVERIFY(errorOf({"--engine", "mpi", "--batch-per-worker", "2"})
                    .contains(QStringLiteral("--batch-per-worker: an MPI job's sync and async have different worker")));
        QVERIFY(errorOf({"--workers", "4096", "--batch-per-worker", "1000000"})
                    .contains(QStringLiteral("is a batch of 4096000000, above the largest allowed")));
    }

    void outOfRangeValuesNameTheirOption()
    {
        for (const OptionSpec& spec : optionTable()) {
            const std::string flag = "--" + spec.name;
            std::vector<std::string> bad;
            if (spec.type == OptionType::Integer) {
                bad = {formatNumber(spec.min - 1), formatNumber(spec.max + 1), "1.5", "x"};
            } else if (spec.type == OptionType::Number) {
                bad = {formatNumber(spec.minExclusive ? spec.min : spec.min - 0.5),
                    formatNumber(spec.maxExclusive ? spec.max : spec.max * 2 + 1), "nan", "inf", "x"};
            } else if (spec.type == OptionType::Choice) {
                bad = {"no-such-" + spec.name};
            } else if (spec.type == OptionType::Text) {
                bad = {""};
            }
            for (const std::string& value : bad) {
                const QString message = errorOf({flag, value});
                QVERIFY2(message.startsWith(QString::fromStdString(flag + ": ")),
                    qPrintable(QStringLiteral("%1 %2 gave \"%3\"")
                                   .arg(QString::fromStdString(flag), QString::fromStdString(value), message)));
                // The same value in a --config file names the file's field.
                if (value == "nan" || value == "inf")
                    continue; // not JSON numbers
                const bool numeric
                    = (spec.type == OptionType::Integer || spec.type == OptionType::Number) && value != "x";
                Json config = Json::object();
                config[spec.name] = numeric ? Json(std::stod(value)) : Json(value);
                const std::string text = dumpJson(config, -1);
                const QString fromFile = errorOf({}, &text);
                QVERIFY2(fromFile.startsWith(
                             QStringLiteral("field \"%1\" of config file").arg(QString::fromStdString(spec.name))),
                    qPrintable(QStringLiteral("config %1 gave \"%2\"").arg(QString::fromStdString(text), fromFile)));
            }
        }
        // Lists: each element is checked, and the message names the option.
        for (const auto& [flag, value] :
            std::vector<std::pair<std::string, std::string>> {{"--slow", "0:1001"}, {"--slow", "0:0.5"},
                {"--slow", "x:2"}, {"--slow", "0"}, {"--layers", "0,1"}, {"--layers", "1,,1"}, {"--layers", "1,x,1"}}) {
            const QString message = errorOf({flag, value});
            QVERIFY2(message.startsWith(QString::fromStdString(flag + ": "))
                    || message.startsWith(QString::fromStdString(flag + " (")), // "--slow (worker in 'x:2'): ..."
                qPrintable(QStringLiteral("%1 %2 gave \"%3\"")
                               .arg(QString::fromStdString(flag), QString::fromStdString(value), message)));
        }
    }

    void readmeAndHelpListEveryOption()
    {
        QFile readme(QStringLiteral(SGDSCOPE_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString all = QString::fromUtf8(readme.readAll());
        const qsizetype headless = all.indexOf(QStringLiteral("## Headless runs"));
        QVERIFY(headless >= 0);
        const QString text = all.mid(headless, all.indexOf(QStringLiteral("\n## "), headless + 1) - headless);
        const QString help = QString::fromStdString(helpText());
        QStringList known = {QStringLiteral("headless"), QStringLiteral("config"), QStringLiteral("help"),
            QStringLiteral("session-child"), QStringLiteral("version"), QStringLiteral("list-presets")};
        for (const OptionSpec& spec : optionTable()) {
            const QString usage = QStringLiteral("--%1 %2").arg(
                QString::fromStdString(spec.name), QString::fromStdString(spec.valueName));
            QVERIFY2(text.contains(usage), qPrintable(QStringLiteral("README lacks %1").arg(usage)));
            QVERIFY2(help.contains(usage), qPrintable(QStringLiteral("--help lacks %1").arg(usage)));
            known << QString::fromStdString(spec.name);
        }
        // And the README names no option that does not exist.
        const QRegularExpression flag(QStringLiteral("(?<![\\w-])--([a-z][a-z-]+)"));
        for (auto it = flag.globalMatch(text); it.hasNext();) {
            const QString name = it.next().captured(1);
            QVERIFY2(
                known.contains(name), qPrintable(QStringLiteral("README names --%1, which is no option").arg(name)));
        }
    }

    void readmeAndHelpListEveryStudyFlag()
    {
        QFile readme(QStringLiteral(SGDSCOPE_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString all = QString::fromUtf8(readme.readAll());
        const qsizetype studies = all.indexOf(QStringLiteral("## Studies"));
        QVERIFY(studies >= 0);
        const QString text = all.mid(studies, all.indexOf(QStringLiteral("\n## "), studies + 1) - studies);
        const QString help = QString::fromStdString(helpText());
        for (const StudyFlag& f : studyFlags()) {
            const QString usage = QStringLiteral("--%1%2").arg(QString::fromStdString(f.name),
                f.valueName.empty() ? QString() : QStringLiteral(" ") + QString::fromStdString(f.valueName));
            QVERIFY2(text.contains(usage), qPrintable(QStringLiteral("README's Studies lack %1").arg(usage)));
            QVERIFY2(help.contains(usage), qPrintable(QStringLiteral("--help lacks %1").arg(usage)));
        }
        for (const ReadyStudy& r : readyStudies()) {
            const QString usage = QStringLiteral("--ready %1").arg(QString::fromStdString(r.name));
            QVERIFY2(text.contains(usage), qPrintable(QStringLiteral("README's Studies lack %1").arg(usage)));
            QVERIFY2(help.contains(QString::fromStdString(r.name)), r.name.c_str());
        }
        // And the Studies section names no flag that is neither a study flag nor a run option.
        const QRegularExpression flag(QStringLiteral("(?<![\\w-])--([a-z][a-z-]+)"));
        for (auto it = flag.globalMatch(text); it.hasNext();) {
            const std::string name = it.next().captured(1).toStdString();
            const bool known = findStudyFlag(name) || findOption(name) || name == "headless" || name == "config"
                || name == "progress" || name == "enable-recovery" || name == "oversubscribe";
            QVERIFY2(known,
                qPrintable(
                    QStringLiteral("README's Studies name --%1, which is no flag").arg(QString::fromStdString(name))));
        }
    }

    void readyStudiesResolve()
    {
        // Each ready-made study's flags and options make a study (the plan's checks run in test_study).
        for (const ReadyStudy& r : readyStudies()) {
            StudySpec::Options flags {{"study", "s"}, {"ready", r.name}};
            StudySpec::Options options;
            try {
                const StudySpec spec = makeStudySpec(flags, options, "");
                QVERIFY(!spec.axes.empty());
            } catch (const SgdError& e) {
                QFAIL(qPrintable(
                    QStringLiteral("--ready %1: %2").arg(QString::fromStdString(r.name), QString::fromUtf8(e.what()))));
            }
        }
        // The command line's own replace the ready study's: an axis, an option.
        StudySpec::Options flags {{"study", "s"}, {"ready", "scaling"}, {"sweep", "workers=1,2"}};
        StudySpec::Options options {{"cluster", "wan"}};
        const StudySpec spec = makeStudySpec(flags, options, "");
        bool workers = false;
        for (const StudyAxis& a : spec.axes) {
            if (a.name == "workers") {
                workers = true;
                QCOMPARE(a.values, (std::vector<std::string> {"1", "2"}));
            }
        }
        QVERIFY(workers);
        QCOMPARE(
            std::count(spec.shared.begin(), spec.shared.end(), std::pair<std::string, std::string> {"cluster", "wan"}),
            std::ptrdiff_t {1});
        QCOMPARE(
            std::count_if(spec.shared.begin(), spec.shared.end(), [](const auto& o) { return o.first == "cluster"; }),
            std::ptrdiff_t {1});
        try {
            (void)makeStudySpec({{"study", "s"}, {"ready", "speed"}}, {}, "");
            QFAIL("an unknown ready study was taken");
        } catch (const SgdError& e) {
            QVERIFY2(
                std::string(e.what()).find("--ready: 'speed' is not a ready-made study; use scaling") == 0, e.what());
        }
    }

    void badConfigFiles_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("needle");
        QTest::addRow("unknown-key") << QStringLiteral(R"({"workerz": 2})")
                                     << QStringLiteral("field \"workerz\" of config file 'c.json': unknown field");
        QTest::addRow("wrong-type") << QStringLiteral(R"({"workers": true})")
                                    << QStringLiteral(
                                           "field \"workers\" of config file 'c.json': expected a number or a string");
        QTest::addRow("bad-value") << QStringLiteral(R"({"workers": 0})")
                                   << QStringLiteral("field \"workers\" of config file 'c.json': 0 is not allowed");
        QTest::addRow("not-object") << QStringLiteral("[1]") << QStringLiteral("expected a JSON object");
        QTest::addRow("syntax") << QStringLiteral(R"({"workers": 2,})")
                                << QStringLiteral("config file 'c.json': syntax error while parsing object key - "
                                                  "unexpected '}'; expected string literal at line 1, column 15");
        QTest::addRow("duplicate") << QStringLiteral(R"({"lr": 1, "lr": 2})")
                                   << QStringLiteral("duplicate key \"lr\" at line 1, column 11");
        QTest::addRow("duplicate-nested-with-colon-in-a-string")
            << QStringLiteral("{\"a\": \"x\\\":\",\n \"lr\": 1,\n \"lr\": 2}")
            << QStringLiteral("duplicate key \"lr\" at line 3, column 2");
        QTest::addRow("too-deep") << QString(70, QLatin1Char('[')) + QString(70, QLatin1Char(']'))
                                  << QStringLiteral("nesting deeper than 64 levels at line 1, column 66");
        QTest::addRow("nested-config") << QStringLiteral(R"({"config": "x.json"})")
                                       << QStringLiteral("not allowed in a configuration file");
        QTest::addRow("number-out-of-range")
            << QStringLiteral("{\"lr\":\n 1e999}") << QStringLiteral("number 1e999 out of range at line 2, column 2");
        QTest::addRow("null") << QStringLiteral(R"({"lr": null})") << QStringLiteral("null is not a value");
        QTest::addRow("preset-type") << QStringLiteral(R"({"preset": 3})")
                                     << QStringLiteral("field \"preset\" of config file 'c.json': expected a string");
    }

    void badConfigFiles()
    {
        QFETCH(QString, json);
        QFETCH(QString, needle);
        const std::string text = json.toStdString();
        const QString message = errorOf({"--config", "c.json"}, &text);
        QVERIFY2(message.contains(needle), qPrintable(QStringLiteral("got \"%1\"").arg(message)));
    }
};

QTEST_GUILESS_MAIN(TestConfig)
#include "test_config.moc"
