// The bits must not change: every run that was deterministic before the engine-seam restructuring (any
// sync run, async at one worker) gives the same params_digest as the code at commit 1988d02 gave. The
// digests below were recorded with that commit's sgdscope --headless, Release build, on this project's
// machines (AMD EPYC, AVX-512; OpenBLAS for the large products); a CPU with other vector units may round
// differently, which this test would report. The rows run in one process in this order on purpose: a
// single-worker run after multi-worker ones once gave other bits (OpenBLAS ran its products on two threads;
// core/nn/Gemm.cpp).
#include "app/CommandLine.h"
#include "core/io/ParameterDigest.h"
#include "core/metrics/TrainingObserver.h"
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
        const QString csv = QStringLiteral(SGDSCOPE_TEST_DATA "/regression.csv");
        auto row = [](const char* name, const char* args, const char* digest) {
            QTest::addRow("%s", name) << QString::fromLatin1(args).split(QLatin1Char(' '))
                                      << QString::fromLatin1(digest);
        };
        row("parabola sync P1", "--preset parabola --mode sync --workers 1",
            "911c882ab2576e1cac51a32b5d342f78847cfcae98846f92f9f1483801f56091");
        row("parabola sync P2 chunk 10", "--preset parabola --mode sync --workers 2 --chunk 10",
            "8d063af1d6c27cd46e1e7f4f91ad91058db68eb8d02cfdaa704cc5ebb6ae536e");
        row("parabola sync P3 K2 momentum",
            "--preset parabola --mode sync --workers 3 --accum 2 --chunk 7 --momentum 0.5 --steps 500",
            "4886cfde90e554fffa9ebf483d86d58a3d20417be92b9cb92ba7d2de421b647c");
        row("parabola async P1 lock", "--preset parabola --mode async --workers 1 --steps 500",
            "5cfa5a246fd6f8c188ba48ca734be2767ad9aeeb449ebe5ffa8822d61f5f6247");
        row("parabola async P1 lockfree",
            "--preset parabola --mode async --workers 1 --steps 500 --async-apply lockfree",
            "5cfa5a246fd6f8c188ba48ca734be2767ad9aeeb449ebe5ffa8822d61f5f6247");
        row("parabola async P1 staleness lr",
            "--preset parabola --mode async --workers 1 --steps 500 --async-lr staleness --momentum 0.3",
            "4df9d396db2b54aca151dc97dcbe3779e0c35c66c6e261e74e54b165734e7955");
        row("blobs sync P2", "--preset blobs --mode sync --workers 2 --steps 60",
            "c5240903083c5b196877105c9fba36e2129631ef8694a6802faa4a9ffa6dec96");
        row("blobs sync P3 K2", "--preset blobs --mode sync --workers 3 --accum 2 --steps 60 --batch 384",
            "cdf0e978415df4d8d1aeb0ca882ce386d790ecbbfc368c0ee3d2cbbdd3730400");
        row("blobs async P1", "--preset blobs --mode async --workers 1 --steps 40",
            "30fe292ef7fd2afb658e92ca6d99f36690ed15b7927830aeec2640277fc85138");
        row("fashion sync P2", "--preset fashion-mnist --mode sync --workers 2 --steps 50",
            "58f287ff006963c5b4ced0d7b52151a09f0ea11a894f5f0405deda2fdce02e05");
        row("fashion sync P1 K3",
            "--preset fashion-mnist --mode sync --workers 1 --accum 3 --steps 50 --batch 96 --chunk 32",
            "b0313437a2de7397f98e26c2bd996ae0d53c0ceb12e3b97af08ac009daa26d94");
        row("fashion async P1", "--preset fashion-mnist --mode async --workers 1 --steps 30 --samples 10000",
            "0132dfb6db6a9db010c8419b1a1351646845e6ca6173f16f3a37ac127a5faf57");
        // (--samples 50: the recorded runs had the parabola preset's 50 samples cut the CSV's 64 rows, which
        // the preset no longer does to other data sets.)
        for (const char* mode : {"sync", "async"}) {
            QTest::addRow("csv relu %s", mode)
                << (QStringList {QStringLiteral("--dataset"), QStringLiteral("csv"), QStringLiteral("--data"), csv}
                       + QStringLiteral("--layers 2,4,1 --activation relu --workers 1 --steps 100 --weight-init he "
                                        "--samples 50 --mode %1")
                             .arg(QString::fromLatin1(mode))
                             .split(QLatin1Char(' ')))
                << QStringLiteral("1d4a2c87109bd6d377bd3f9bbb94b237204c85f5e2b4a3d6d3b25c2b69a75053");
        }
    }

    void digestsAreThoseOfTheRecordedRuns()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, digest);
        std::vector<std::string> list;
        for (const QString& a : args)
            list.push_back(a.toStdString());
        const RunConfig config = buildRunConfig(parseCommandLine(list));
        const PreparedRun run = prepareRun(config);
        TrainingObserver quiet;
        const ModeResult result = runMode(run, config.runsSync() ? Mode::Sync : Mode::Async, quiet);
        QCOMPARE(QString::fromStdString(result.paramsDigest), digest);
    }
};

QTEST_GUILESS_MAIN(TestDigests)
#include "test_digests.moc"
