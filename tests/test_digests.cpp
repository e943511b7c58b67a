// The bits must not change, on any machine: every run that is deterministic (any sync run, async at one worker)
// gives the params_digest recorded here, whatever the CPU and on every kernel path (each row runs on the
// scalar reference and on every vector path this CPU has; paths it lacks are skipped). Recorded once, at the
// kernel order of core/nn/kernels/Isa.h (kernelOrderVersion 1; the convolutions' rows when they came); a change of
// the source that changes them must say so and record them anew.
#include "app/CommandLine.h"
#include "core/engines/TrainerFactory.h"
#include "core/io/ParameterDigest.h"
#include "core/metrics/TrainingObserver.h"
#include "core/nn/kernels/Isa.h"
#include "core/nn/kernels/KernelTable.h"
#include "core/run/DataSource.h"
#include "core/run/Experiment.h"

#include <QTest>

using namespace sgdscope;

class TestDigests : public QObject
{
    Q_OBJECT
private slots:
    void digestsAreThoseOfTheRecordedRuns_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("digest");
        QTest::addColumn<int>("isa");
        const QString csv = QStringLiteral(SGDSCOPE_TEST_DATA "/regression.csv");
        std::vector<std::tuple<std::string, QStringList, QString>> rows;
        auto row = [&](const char* name, const char* args, const char* digest) {
            rows.emplace_back(name, QString::fromLatin1(args).split(QLatin1Char(' ')), QString::fromLatin1(digest));
        };
        row("parabola sync P1", "--preset parabola --mode sync --workers 1",
            "c77e13cb2b17e52543f949065eaccbb8ec5710bcd86143e5b1540b2363021768");
        // every worker has a chunk of the 50 (one sample each): the same bits as one worker
        row("parabola sync P4 K3", "--preset parabola --mode sync --workers 4 --accum 3",
            "c77e13cb2b17e52543f949065eaccbb8ec5710bcd86143e5b1540b2363021768");
        row("parabola sync P2 chunk 10", "--preset parabola --mode sync --workers 2 --chunk 10",
            "c7b532043e40022e45117cd2a612272a3b6a60afe1e77b773022183534e9e265");
        row("parabola sync P3 K2 momentum",
            "--preset parabola --mode sync --workers 3 --accum 2 --chunk 7 --momentum 0.5 --steps 500",
            "2664e3d7981256adf6691d44d1a32a3131bee62347f0d986cc9cb936c4c39125");
        row("parabola async P1 lock", "--preset parabola --mode async --workers 1 --steps 500",
            "59f5be108ac2cd184407fb2d66fd86616dd07cd9f53574af04fffeafc4e44afb");
        row("parabola async P1 lockfree",
            "--preset parabola --mode async --workers 1 --steps 500 --async-apply lockfree",
            "59f5be108ac2cd184407fb2d66fd86616dd07cd9f53574af04fffeafc4e44afb");
        row("parabola async P1 staleness lr",
            "--preset parabola --mode async --workers 1 --steps 500 --async-lr staleness --momentum 0.3",
            "00d577b68cae473be910ab3e583e5711a46f8cb9fe25095494b0a12f1b6607fc");
        row("blobs sync P2", "--preset blobs --mode sync --workers 2 --steps 60",
            "a45a698cf12363c576f86dc27220be5f544ad03fe701952159f28cf8832ebd85");
        row("blobs sync P3 K2", "--preset blobs --mode sync --workers 3 --accum 2 --steps 60 --batch 384",
            "1a4b08ce4496e86c1a732977c6d168db5dcae5e6c10f665557ee9782c4621d25");
        row("blobs async P1", "--preset blobs --mode async --workers 1 --steps 40",
            "78386276c04c9c65156201182f271e04ad8060ad1e451d46947ecd920742bae1");
        row("fashion sync P2", "--preset fashion-mnist --mode sync --workers 2 --steps 50",
            "a4e88ca556d9e3d6da3d42475fed5e23bb36699b98484f0140dba83708a52854");
        row("fashion sync P1 K3",
            "--preset fashion-mnist --mode sync --workers 1 --accum 3 --steps 50 --batch 96 --chunk 32",
            "ccc565c7bbc1a318f22ceaf5a0da89b3948efd2ada89021208517d6fd7efc104");
        row("fashion async P1", "--preset fashion-mnist --mode async --workers 1 --steps 30 --samples 10000",
            "45407f6df50097de07f11fc9abc03a63f3dd6059730e03d85b9c29b0792e7703");
        // LeNet-5 (fashion-cnn): convolutions, pooling and a flatten. At a constant rate (recorded when the
        // convolutions came, then at one worker), and at the preset's linear schedule (recorded when it came, at P x K:
        // one worker gave the same bits). Three rows, as before the schedule: the scalar path runs each for seconds.
        row("fashion-cnn sync P1 constant",
            "--preset fashion-cnn --lr-schedule constant --mode sync --workers 1 --steps 8 --samples 4096",
            "48c82ef5b8dca777b1721cda1b1bb9f0141fa91add1a6cb7d8ea7d9ca1988e8f");
        row("fashion-cnn sync P3 K2", "--preset fashion-cnn --mode sync --workers 3 --accum 2 --steps 8 --samples 4096",
            "90ddb717ab2bf726ebbec4396bb4b1f407a28bf2240e707b11c920363331c8e9");
        row("fashion-cnn async P1", "--preset fashion-cnn --mode async --workers 1 --steps 6 --samples 4096",
            "b430fc9b786cf00d4efd456b03f2338b8f1c9c2c5d1851a35f924768a949f482");
        // strides, padding, average pooling and tanh on generated data
        row("blobs conv sync P2",
            "--preset blobs --model input1x8x8,conv5x3x3s2p1,avgpool2,dense10 --activation tanh --mode sync --workers "
            "2 "
            "--steps 20 --samples 2048",
            "f2c15f54263cb4cc3ba81bad91e31c8a2eac9062f5d297ea60a9d03f6ab3ff92");
        for (const char* mode : {"sync", "async"}) {
            rows.emplace_back(std::string("csv relu ") + mode,
                QStringList {QStringLiteral("--dataset"), QStringLiteral("csv"), QStringLiteral("--data"), csv}
                    + QStringLiteral("--layers 2,4,1 --activation relu --workers 1 --steps 100 --weight-init he "
                                     "--samples 50 --mode %1")
                          .arg(QString::fromLatin1(mode))
                          .split(QLatin1Char(' ')),
                QStringLiteral("44ada25213a9d28a70ae3c59eb1aca176c69d6656dc388828ee233dfb5d03571"));
        }
        for (const auto& [name, args, digest] : rows) {
            for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
                QTest::addRow("%s, %s", name.c_str(), isaName(isa).c_str()) << args << digest << static_cast<int>(isa);
        }
        // The scalar path built without FMA instructions (std::fma a library call, as on a CPU without FMA; run
        // here on the rows that take at most a second at its speed: the blobs MLP rows took 5 to 7 s each).
        for (const auto& [name, args, digest] : rows) {
            if (!args.contains(QStringLiteral("fashion-mnist")) && !args.contains(QStringLiteral("fashion-cnn"))
                && !name.starts_with("blobs sync") && !name.starts_with("blobs async"))
                QTest::addRow("%s, scalar without FMA instructions", name.c_str()) << args << digest << -1;
        }
    }

    void digestsAreThoseOfTheRecordedRuns()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, digest);
        QFETCH(int, isa);
        struct Restore
        {
            ~Restore()
            {
                resetActiveIsa();
                kernels::useKernelTableForTesting(nullptr);
            }
        } restore;
        if (isa < 0) {
            kernels::useKernelTableForTesting(&kernels::scalarKernels);
        } else {
            if (!isaSupported(static_cast<Isa>(isa)))
                QSKIP("this CPU lacks the path's instructions");
            setActiveIsa(static_cast<Isa>(isa));
        }
        std::vector<std::string> list;
        for (const QString& a : args)
            list.push_back(a.toStdString());
        const RunConfig config = buildRunConfig(parseCommandLine(list));
        // A row's data is loaded once for its paths, which come one after another (Fashion-MNIST takes a second).
        static QStringList loadedFor;
        static std::shared_ptr<const DataSplit> loaded;
        if (!loaded || loadedFor != args) {
            loaded.reset();
            loaded = std::make_shared<const DataSplit>(loadData(config));
            loadedFor = args;
        }
        PreparedRun run = prepareRun(config, loaded);
        // The run as runMode trains it, without the whole-set evaluations (which read the parameters and never
        // change them): on the scalar path they took most of a fashion row's time. runMode itself is checked below.
        run.settings.evalEverySamples = 0;
        const auto trainer
            = makeTrainer(run.engine, config.runsSync() ? Mode::Sync : Mode::Async, run.problem, run.settings);
        TrainingObserver quiet;
        trainer->run(RunLimits {}, quiet);
        trainer->endOfRun(quiet);
        QVERIFY(!trainer->diverged());
        QCOMPARE(QString::fromStdString(parameterDigest(run.problem->layout, trainer->parameters().data())), digest);
    }

    // A whole mode run, with its evaluations, as the headless run and the window make it, gives the recorded bits.
    void aModeRunGivesTheRecordedDigest()
    {
        const RunConfig config = buildRunConfig(parseCommandLine(
            {"--preset", "blobs", "--mode", "sync", "--workers", "2", "--steps", "60", "--eval-every", "7"}));
        const PreparedRun run = prepareRun(config);
        struct Counting : TrainingObserver
        {
            int evaluations = 0;
            void onEvaluation(const EvaluationRecord&) override { ++evaluations; }
        } counting;
        const ModeResult result = runMode(run, Mode::Sync, counting);
        QVERIFY(counting.evaluations > 8);
        QCOMPARE(QString::fromStdString(result.paramsDigest),
            QStringLiteral("a45a698cf12363c576f86dc27220be5f544ad03fe701952159f28cf8832ebd85"));
    }
};

QTEST_GUILESS_MAIN(TestDigests)
#include "test_digests.moc"
