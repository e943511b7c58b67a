// A study's logic without running it: its axes (parsed against the option table), its plan (every point checked
// up front, refusals naming the axis and the point), successive halving's rungs, the --best-of reduction (the
// same choice whatever order the points end in), its table and its charts' data.

#include "core/common/Error.h"
#include "core/run/Options.h"
#include "core/run/study/StudyAxis.h"
#include "core/run/study/StudyFigures.h"
#include "core/run/study/StudyPlan.h"
#include "core/run/study/StudySpec.h"
#include "core/run/study/StudyState.h"
#include "core/run/study/StudyTable.h"
#include "core/run/study/StudyTimeLeft.h"
#include "core/run/study/SuccessiveHalving.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace sgdscope;

namespace {

StudySpec::Options pairs(std::initializer_list<std::pair<const char*, const char*>> list)
{
    StudySpec::Options out;
    for (const auto& [k, v] : list)
        out.emplace_back(k, v);
    return out;
}

/// The message of the SgdError `f` throws ("" if none).
template<typename F>
std::string refusal(F&& f)
{
    try {
        f();
    } catch (const SgdError& e) {
        return e.what();
    }
    return {};
}

StudyPlan planOf(const StudySpec::Options& flags, const StudySpec::Options& options)
{
    return StudyPlan::make(makeStudySpec(flags, options, ""), nullptr);
}

/// Settles every due point of `state` in the order `pick` chooses, each with the loss `lossOf` gives it.
template<typename Pick, typename Loss>
void settleAll(StudyState& state, Pick&& pick, Loss&& lossOf)
{
    std::vector<PointRecord*> taken;
    while (true) {
        while (PointRecord* r = state.takeNext(true))
            taken.push_back(r);
        if (taken.empty())
            break;
        const std::size_t i = pick(taken.size());
        PointRecord* r = taken[i];
        taken.erase(taken.begin() + static_cast<std::ptrdiff_t>(i));
        PointResult result;
        result.mode = "sync";
        result.clock = "virtual";
        result.finalLoss = lossOf(*r);
        result.seconds = 1.0;
        r->result = result;
        state.settle(*r, std::isfinite(result.finalLoss) ? PointStatus::Done : PointStatus::Diverged);
    }
}

} // namespace

class TestStudy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void axesExpandRanges_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("values");
        QTest::addRow("list") << QStringLiteral("workers=1,3,5") << QStringLiteral("1|3|5").split(QLatin1Char('|'));
        QTest::addRow("doubling") << QStringLiteral("workers=1..16")
                                  << QStringLiteral("1|2|4|8|16").split(QLatin1Char('|'));
        QTest::addRow("doubling-not-reaching")
            << QStringLiteral("workers=3..20") << QStringLiteral("3|6|12").split(QLatin1Char('|'));
        QTest::addRow("decades") << QStringLiteral("lr=0.001..1x10")
                                 << QStringLiteral("0.001|0.01|0.1|1").split(QLatin1Char('|'));
        QTest::addRow("mixed") << QStringLiteral("workers=1,4..16,100")
                               << QStringLiteral("1|4|8|16|100").split(QLatin1Char('|'));
        QTest::addRow("semicolons") << QStringLiteral("layers=1,5,1;1,10,1")
                                    << QStringLiteral("1,5,1|1,10,1").split(QLatin1Char('|'));
        QTest::addRow("compound") << QStringLiteral("slow-fraction=none,0.1:4,0.2:4")
                                  << QStringLiteral("none|0.1:4|0.2:4").split(QLatin1Char('|'));
    }
    void axesExpandRanges()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, values);
        const StudyAxis axis = parseAxis(text.toStdString(), "--sweep");
        QStringList got;
        for (const auto& v : axis.values)
            got << QString::fromStdString(v);
        QCOMPARE(got, values);
    }

    void axesKnowTheirScale()
    {
        const StudyAxis doubling = parseAxis("workers=1..64", "--sweep");
        QVERIFY(doubling.numeric());
        QVERIFY(doubling.logScale());
        QCOMPARE(doubling.logBase(), 2.0);
        const StudyAxis decades = parseAxis("lr=0.001..1x10", "--sweep");
        QVERIFY(decades.logScale());
        QCOMPARE(decades.logBase(), 10.0);
        const StudyAxis linear = parseAxis("jitter=0,0.1,0.2,0.3", "--sweep");
        QVERIFY(linear.numeric());
        QVERIFY(!linear.logScale());
        const StudyAxis fractions = parseAxis("slow-fraction=none,0.1:4,0.3:4", "--sweep");
        QVERIFY(fractions.numeric()); // none is no slow worker: 0
        QCOMPARE(fractions.positions, (std::vector<double> {0.0, 0.1, 0.3}));
        const StudyAxis clusters = parseAxis("cluster=datacenter,wan", "--sweep");
        QVERIFY(!clusters.numeric());
    }

    void badAxesAreRefusedNamingTheAxis_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("needle");
        QTest::addRow("unknown") << QStringLiteral("workerz=1,2") << QStringLiteral("'workerz' is not a run option");
        QTest::addRow("no-values") << QStringLiteral("workers") << QStringLiteral("is not NAME=VALUES");
        QTest::addRow("range") << QStringLiteral("workers=0,2") << QStringLiteral("--sweep workers (value '0')");
        QTest::addRow("type") << QStringLiteral("lr=fast") << QStringLiteral("--sweep lr (value 'fast')");
        QTest::addRow("fraction") << QStringLiteral("workers=1..8x1.5")
                                  << QStringLiteral("is not a whole number, and --workers takes integers");
        QTest::addRow("twice") << QStringLiteral("workers=1,1") << QStringLiteral("value '1' is listed twice");
        QTest::addRow("mode-list") << QStringLiteral("mode=both") << QStringLiteral("is not one mode");
        QTest::addRow("mode-name") << QStringLiteral("mode=sync,fast") << QStringLiteral("unknown mode 'fast'");
        QTest::addRow("output") << QStringLiteral("out=a,b") << QStringLiteral("--sweep out: cannot be swept");
        QTest::addRow("choice") << QStringLiteral("cluster=moon") << QStringLiteral("--sweep cluster (value 'moon')");
    }
    void badAxesAreRefusedNamingTheAxis()
    {
        QFETCH(QString, text);
        QFETCH(QString, needle);
        const std::string message = refusal([&] { (void)parseAxis(text.toStdString(), "--sweep"); });
        QVERIFY2(QString::fromStdString(message).contains(needle), message.c_str());
    }

    void specRefusesWhatCannotMakeAStudy_data()
    {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("needle");
        QTest::addRow("shared-and-swept")
            << QStringLiteral("sweep") << QStringLiteral("workers=1,2") << QStringLiteral("workers")
            << QStringLiteral("--workers: also swept by --sweep workers");
        QTest::addRow("trace") << QStringLiteral("sweep") << QStringLiteral("workers=1,2") << QStringLiteral("trace")
                               << QStringLiteral("--trace: not for a study");
        QTest::addRow("halving-alone") << QStringLiteral("halving") << QStringLiteral("3") << QStringLiteral("")
                                       << QStringLiteral("--halving: stops candidates of --best-of");
        QTest::addRow("best-of-integer") << QStringLiteral("best-of") << QStringLiteral("workers") << QStringLiteral("")
                                         << QStringLiteral("has no default grid");
    }
    void specRefusesWhatCannotMakeAStudy()
    {
        QFETCH(QString, flag);
        QFETCH(QString, value);
        QFETCH(QString, option);
        QFETCH(QString, needle);
        StudySpec::Options flags {{"study", "s"}, {flag.toStdString(), value.toStdString()}};
        StudySpec::Options options;
        if (!option.isEmpty())
            options.emplace_back(option.toStdString(), option == QStringLiteral("trace") ? "t.json" : "4");
        const std::string message = refusal([&] { (void)makeStudySpec(flags, options, ""); });
        QVERIFY2(QString::fromStdString(message).contains(needle), message.c_str());
    }

    void planRefusesAPointThatCannotRunNamingIt()
    {
        // backup with 1 worker applies no gradient: the point is named, before anything runs.
        const std::string message = refusal([] {
            (void)planOf(pairs({{"study", "s"}, {"sweep", "workers=1,2"}, {"sweep", "mode=sync,backup"}}),
                pairs({{"engine", "sim"}, {"steps", "10"}}));
        });
        QVERIFY2(message.find("--sweep: point workers=1, mode=backup cannot run: --mode: backup with 1 worker")
                != std::string::npos,
            message.c_str());
        // The threads engine's limit, found without starting anything.
        const std::string threads = refusal([] {
            (void)planOf(pairs({{"study", "s"}, {"sweep", "workers=128,512"}}), pairs({{"mode", "sync"}}));
        });
        QVERIFY2(threads.find("point workers=512") != std::string::npos
                && threads.find("is not allowed with --engine threads") != std::string::npos,
            threads.c_str());
        // A batch larger than the data: found by the data's check.
        const std::string batch = refusal([] {
            (void)planOf(pairs({{"study", "s"}, {"sweep", "batch=10,100"}}), pairs({{"mode", "sync"}}));
        });
        QVERIFY2(batch.find("point batch=100") != std::string::npos
                && batch.find("is larger than the training set") != std::string::npos,
            batch.c_str());
    }

    void skipImpossibleListsThePoint()
    {
        const StudyPlan plan = planOf(
            pairs({{"study", "s"}, {"sweep", "workers=1,2"}, {"sweep", "mode=sync,backup"}, {"skip-impossible", ""}}),
            pairs({{"engine", "sim"}, {"steps", "10"}}));
        QCOMPARE(plan.groupCount(), 4);
        QCOMPARE(plan.totalPoints(), 3);
        QVERIFY(plan.fullPoint(1, 0, 0).skipped.find("backup with 1 worker") != std::string::npos);
        QVERIFY(plan.fullPoint(3, 0, 0).skipped.empty());
    }

    // With --halving, the later rungs run only in groups that can run: the study's total was once counted as if
    // the left-out group (backup with 1 worker) ran its survivors too.
    void skippedPointsRunAtNoRung()
    {
        const StudyPlan plan
            = planOf(pairs({{"study", "s"}, {"sweep", "workers=1,2"}, {"sweep", "mode=sync,backup"},
                         {"skip-impossible", ""}, {"best-of", "lr"}, {"halving", "3"}, {"seeds", "2"}}),
                pairs({{"engine", "sim"}, {"steps", "90"}}));
        QCOMPARE(plan.groupCount(), 4);
        QCOMPARE(plan.halving().rungs(), 3);
        StudyState state(plan);
        settleAll(
            state, [](std::size_t) { return std::size_t {0}; },
            [](const PointRecord& r) { return 0.1 + std::abs(r.point.candidate - 3) + 0.01 * r.point.seed; });
        // 3 groups: 7 candidates x 2 seeds, then the best 3 (of 7), then the best 1, each at 2 seeds.
        QCOMPARE(state.settledCount(), 3 * (7 + 3 + 1) * 2);
        QCOMPARE(plan.totalPoints(), state.settledCount());
        // And the work left is counted in the rungs' steps (90 / 9, 90 / 3, 90): the time-left estimate's measure.
        QCOMPARE(plan.totalSteps(), 3 * (7 * 10 + 3 * 30 + 1 * 90) * 2.0);
        QCOMPARE(plan.totalSteps(), state.settledSteps());
    }

    // The time left after the first rung of a halving study, against what the rest then takes, for points whose
    // cost is mostly the process (start, data, evaluation, charts) and for points whose cost is mostly training.
    // Seconds per step alone once said about 5 times the truth for the first (the short first rung's fixed part
    // counted again for every later step); seconds per point alone says a fraction of it for the second.
    void theTimeLeftAfterTheFirstRungIsWhatTheRestTakes()
    {
        const StudyPlan plan
            = planOf(pairs({{"study", "s"}, {"sweep", "workers=1,2"}, {"best-of", "lr"}, {"halving", "3"}}),
                pairs({{"engine", "sim"}, {"steps", "90"}}));
        QCOMPARE(plan.halving().rungs(), 3);
        struct Cost
        {
            double fixed;
            double perStep;
        };
        for (const Cost cost : {Cost {2.0, 0.001}, Cost {0.05, 0.2}}) {
            StudyState state(plan);
            StudyTimeLeft timeLeft;
            double estimate = -1.0;
            double rest = 0.0;
            std::vector<PointRecord*> taken;
            while (true) {
                while (PointRecord* r = state.takeNext(true))
                    taken.push_back(r);
                if (taken.empty())
                    break;
                PointRecord* r = taken.front();
                taken.erase(taken.begin());
                if (r->point.rung > 0 && estimate < 0)
                    estimate = timeLeft.seconds(
                        state.total() - state.settledCount(), plan.totalSteps() - state.settledSteps(), 1);
                const double training = cost.perStep * static_cast<double>(r->point.steps);
                if (r->point.rung > 0)
                    rest += cost.fixed + training;
                timeLeft.ran(cost.fixed + training, training, static_cast<double>(r->point.steps));
                PointResult result;
                result.mode = "sync";
                result.clock = "virtual";
                result.finalLoss = 0.1 + std::abs(r->point.candidate - 3);
                r->result = result;
                state.settle(*r, PointStatus::Done);
            }
            QCOMPARE(state.settledCount(), plan.totalPoints());
            QVERIFY(rest > 0);
            QVERIFY2(std::abs(estimate - rest) < 1e-6 * rest,
                (std::to_string(estimate) + " s estimated, " + std::to_string(rest) + " s taken").c_str());
            // Two points at a time: half.
            QVERIFY(std::abs(timeLeft.seconds(10, 0, 2) - timeLeft.seconds(10, 0, 1) / 2) < 1e-12);
        }
        StudyTimeLeft none;
        QCOMPARE(none.seconds(3, 30, 1), -1.0); // nothing ran yet: unknown
    }

    void sharedModeKnobsApplyWhereTheyTakeEffect()
    {
        // --backup-workers is backup's: the sync points leave it out (a note says so); none taking it is refused.
        const StudyPlan plan = planOf(pairs({{"study", "s"}, {"sweep", "mode=sync,backup"}}),
            pairs({{"engine", "sim"}, {"workers", "4"}, {"steps", "10"}, {"backup-workers", "2"}}));
        const auto has = [](const StudyPoint& p, const char* name) {
            return std::any_of(p.options.begin(), p.options.end(), [&](const auto& o) { return o.first == name; });
        };
        QVERIFY(!has(plan.fullPoint(0, 0, 0), "backup-workers"));
        QVERIFY(has(plan.fullPoint(1, 0, 0), "backup-workers"));
        QVERIFY(std::any_of(plan.notes().begin(), plan.notes().end(), [](const std::string& n) {
            return n.find("--backup-workers applies only to the mode=backup points (1 of 2 points)")
                != std::string::npos;
        }));
        const std::string none = refusal([] {
            (void)planOf(
                pairs({{"study", "s"}, {"sweep", "workers=2,4"}}), pairs({{"mode", "sync"}, {"ssp-bound", "2"}}));
        });
        QVERIFY2(none.find("--ssp-bound: takes effect on no point of the study") != std::string::npos, none.c_str());
    }

    void aKnobLeftOutIsSaidForItsAxis()
    {
        // Sync and ssp points both leave --backup-workers out: the note names the axis value that takes it, and blames
        // no one point's mode ("but --mode is sync" was said of the ssp points too).
        const StudyPlan plan
            = planOf(pairs({{"study", "s"}, {"sweep", "mode=sync,backup,ssp"}, {"sweep", "workers=4,8"}}),
                pairs({{"engine", "sim"}, {"steps", "10"}, {"backup-workers", "2"}}));
        std::string note;
        for (const std::string& n : plan.notes())
            if (n.find("--backup-workers") != std::string::npos)
                note = n;
        QCOMPARE(note,
            std::string("--backup-workers applies only to the mode=backup points (2 of 6 points), and is left out of "
                        "the others"));
        // Where no one axis decides (lockfree applies to async on the threads engine only), the note gives a point
        // and the reason there.
        const StudyPlan mixed
            = planOf(pairs({{"study", "s"}, {"sweep", "engine=threads,sim"}, {"sweep", "mode=sync,async"}}),
                pairs({{"workers", "2"}, {"steps", "10"}, {"async-apply", "lockfree"}}));
        std::string mixedNote;
        for (const std::string& n : mixed.notes())
            if (n.find("--async-apply") != std::string::npos)
                mixedNote = n;
        QVERIFY2(mixedNote.find("--async-apply applies to 1 of 4 points, and is left out of the others (at point "
                                "engine=threads, mode=sync: ")
                != std::string::npos,
            mixedNote.c_str());
    }

    void readyStudiesPlanWithoutRunning_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("axes"); // NAME=COUNT of values, in order
        QTest::addColumn<int>("candidates");
        QTest::addColumn<int>("seeds");
        QTest::addColumn<int>("rungs");
        QTest::addColumn<int>("points");
        // workers 1..1024 (11) x 3 modes, 5 learning rates in 3 rungs: 165 first runs, 2 then 1 per group after.
        QTest::addRow("scaling") << QStringLiteral("scaling")
                                 << QStringList {QStringLiteral("workers=11"), QStringLiteral("mode=3")} << 5 << 1 << 3
                                 << 33 * 5 + 33 * (2 + 1);
        // 5 shares of slow workers x 3 modes x 5 learning rates x 2 seeds, in 4 rungs (5, 3, 2, 1 candidates).
        QTest::addRow("stragglers") << QStringLiteral("stragglers")
                                    << QStringList {QStringLiteral("slow-fraction=5"), QStringLiteral("mode=3")} << 5
                                    << 2 << 4 << 15 * 5 * 2 + 15 * (3 + 2 + 1) * 2;
        // workers 1..256 (9) x 2 step rules x 3 seeds, one learning rate.
        QTest::addRow("staleness") << QStringLiteral("staleness")
                                   << QStringList {QStringLiteral("workers=9"), QStringLiteral("async-lr=2")} << 1 << 3
                                   << 1 << 54;
    }
    void readyStudiesPlanWithoutRunning()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, axes);
        QFETCH(int, candidates);
        QFETCH(int, seeds);
        QFETCH(int, rungs);
        QFETCH(int, points);
        // The plan checks every point as its run would, loading the data once: nothing runs.
        const StudyPlan plan = planOf(pairs({{"study", "s"}, {"ready", qPrintable(name)}}), {});
        QStringList got;
        for (const StudyAxis& a : plan.axes())
            got << QStringLiteral("%1=%2").arg(QString::fromStdString(a.name)).arg(a.values.size());
        QCOMPARE(got, axes);
        QCOMPARE(plan.candidateCount(), candidates);
        QCOMPARE(plan.seedCount(), seeds);
        QCOMPARE(plan.halving().rungs(), rungs);
        QCOMPARE(plan.totalPoints(), points);
        // Every point can run (a ready-made study skips nothing), on the simulated datacenter.
        for (int g = 0; g < plan.groupCount(); ++g)
            for (int c = 0; c < plan.candidateCount(); ++c)
                for (int k = 0; k < plan.seedCount(); ++k) {
                    const StudyPoint& p = plan.fullPoint(g, c, k);
                    QVERIFY2(p.skipped.empty(), p.skipped.c_str());
                    QCOMPARE(p.engine, EngineKind::Sim);
                    QVERIFY(!p.timesTheCores());
                }
        if (name == QStringLiteral("stragglers"))
            QVERIFY(std::any_of(plan.notes().begin(), plan.notes().end(), [](const std::string& n) {
                return n
                    == "--backup-workers applies only to the mode=backup points (50 of 150 points), and is left "
                       "out of the others";
            }));
    }

    void aModeListBecomesAnAxisAndSeedsFollowTheSeed()
    {
        const StudyPlan plan
            = planOf(pairs({{"study", "s"}, {"sweep", "workers=1,2"}, {"seeds", "3"}}), pairs({{"seed", "7"}}));
        QCOMPARE(plan.axes().front().name, std::string("mode")); // the default sync,async
        QCOMPARE(plan.axes().front().values, (std::vector<std::string> {"sync", "async"}));
        QCOMPARE(plan.seeds().values, (std::vector<std::string> {"7", "8", "9"}));
        QCOMPARE(plan.totalPoints(), 2 * 2 * 3);
        const StudyPoint& p = plan.fullPoint(3, 0, 2);
        QCOMPARE(p.id, std::string("mode-async_workers-2_seed-9"));
        const auto seed
            = std::find_if(p.options.begin(), p.options.end(), [](const auto& o) { return o.first == "seed"; });
        QVERIFY(seed != p.options.end() && seed->second == "9");
        QCOMPARE(std::count_if(p.options.begin(), p.options.end(), [](const auto& o) { return o.first == "seed"; }), 1);
    }

    void halvingRungs_data()
    {
        QTest::addColumn<int>("candidates");
        QTest::addColumn<int>("eta");
        QTest::addColumn<QList<int>>("survivors");
        QTest::addColumn<QList<int>>("steps"); // of a 900-step run
        QTest::addRow("7-by-3") << 7 << 3 << QList<int> {7, 3, 1} << QList<int> {100, 300, 900};
        QTest::addRow("9-by-3") << 9 << 3 << QList<int> {9, 3, 1} << QList<int> {100, 300, 900};
        QTest::addRow("10-by-3") << 10 << 3 << QList<int> {10, 4, 2, 1} << QList<int> {33, 100, 300, 900};
        QTest::addRow("4-by-2") << 4 << 2 << QList<int> {4, 2, 1} << QList<int> {225, 450, 900};
        QTest::addRow("off") << 7 << 0 << QList<int> {7} << QList<int> {900};
        QTest::addRow("one") << 1 << 3 << QList<int> {1} << QList<int> {900};
    }
    void halvingRungs()
    {
        QFETCH(int, candidates);
        QFETCH(int, eta);
        QFETCH(QList<int>, survivors);
        QFETCH(QList<int>, steps);
        const SuccessiveHalving h(candidates, eta);
        QCOMPARE(h.rungs(), static_cast<int>(survivors.size()));
        for (int r = 0; r < h.rungs(); ++r) {
            QCOMPARE(h.survivors(r), survivors[r]);
            QCOMPARE(h.budget(r, 900), static_cast<std::int64_t>(steps[r]));
        }
    }

    void rankingUsesMediansAndTheTarget()
    {
        // Loss: the median over the seeds decides (a single lucky seed does not).
        const CandidateScore a = scoreOf({{-1, 0.5}, {-1, 0.1}, {-1, 0.6}});
        const CandidateScore b = scoreOf({{-1, 0.3}, {-1, 0.4}, {-1, 0.35}});
        QCOMPARE(rankCandidates({a, b}, false), (std::vector<int> {1, 0}));
        // Target: the time first (not reached is infinite), the loss breaks ties.
        const CandidateScore fast = scoreOf({{2.0, 0.9}});
        const CandidateScore slow = scoreOf({{5.0, 0.1}});
        const CandidateScore never = scoreOf({{-1, 0.01}});
        QCOMPARE(rankCandidates({never, slow, fast}, true), (std::vector<int> {2, 1, 0}));
        QCOMPARE(rankCandidates({never, slow, fast}, false), (std::vector<int> {0, 1, 2}));
        // Diverged runs (NaN loss) rank last.
        const CandidateScore diverged = scoreOf({{-1, std::nan("")}});
        QCOMPARE(rankCandidates({diverged, a}, false), (std::vector<int> {1, 0}));
    }

    void bestOfChoosesTheSameWhateverTheOrder()
    {
        // Seven candidates in three rungs, two groups and two seeds: the loss is a function of the point, so every
        // order of ending must give the same rungs, choices and table.
        const StudyPlan plan = planOf(
            pairs({{"study", "s"}, {"sweep", "workers=2,4"}, {"best-of", "lr"}, {"halving", "3"}, {"seeds", "2"}}),
            pairs({{"engine", "sim"}, {"mode", "sync"}, {"steps", "90"}}));
        QCOMPARE(plan.candidateCount(), 7);
        QCOMPARE(plan.halving().rungs(), 3);
        // The loss is smallest for lr = 0.02 (candidate 4) in the longer runs, but at the shortest rung 0.04 leads:
        // the halving keeps the best third there, so 0.02 stays among them, and wins the later rungs.
        auto loss = [](const PointRecord& r) {
            const double distance = std::abs(r.point.candidate - (r.point.rung == 0 ? 5 : 4));
            return 0.1 + distance + 0.01 * r.point.seed + 0.001 * r.point.group;
        };
        StudyState inOrder(plan);
        settleAll(
            inOrder, [](std::size_t) { return std::size_t {0}; }, loss);
        StudyState reversed(plan);
        settleAll(
            reversed, [](std::size_t n) { return n - 1; }, loss);
        StudyState shuffled(plan);
        std::mt19937 rng(7);
        settleAll(
            shuffled, [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }, loss);
        const std::string table = resultsCsv(tableOf(inOrder));
        QCOMPARE(resultsCsv(tableOf(reversed)), table);
        QCOMPARE(resultsCsv(tableOf(shuffled)), table);
        QCOMPARE(inOrder.settledCount(), plan.totalPoints());
        for (int g = 0; g < plan.groupCount(); ++g) {
            const StudyState::GroupRecord& group = inOrder.group(g);
            QCOMPARE(group.rungs.size(), std::size_t {3});
            QCOMPARE(group.rungs[0].candidates.size(), std::size_t {7});
            QCOMPARE(group.rungs[1].candidates, (std::vector<int> {4, 5, 6})); // the best third of rung 0
            QCOMPARE(group.rungs[2].candidates, (std::vector<int> {4}));
            QCOMPARE(group.chosen, 4);
        }
        // Kept: the chosen candidate's full runs, every seed; nothing else.
        int kept = 0;
        for (const PointRecord* r : inOrder.records()) {
            if (inOrder.kept(*r)) {
                ++kept;
                QCOMPARE(r->point.candidate, 4);
                QCOMPARE(r->point.rung, 2);
                QCOMPARE(r->point.steps, std::int64_t {90});
            }
        }
        QCOMPARE(kept, plan.groupCount() * plan.seedCount());
        // Rung budgets: 10, 30, 90 steps, in every rung point's options.
        const StudyPoint rung0 = plan.point(0, 0, 0, 0);
        QCOMPARE(rung0.steps, std::int64_t {10});
        QVERIFY(
            std::find(rung0.options.begin(), rung0.options.end(), std::pair<std::string, std::string> {"steps", "10"})
            != rung0.options.end());
        QVERIFY(QString::fromStdString(rung0.id).endsWith(QStringLiteral("_steps-10")));
    }

    void anInterruptedPointLeavesItsRungOpen()
    {
        const StudyPlan plan = planOf(pairs({{"study", "s"}, {"best-of", "lr=0.01,0.02,0.04"}, {"halving", "3"}}),
            pairs({{"engine", "sim"}, {"mode", "sync"}, {"steps", "30"}}));
        StudyState state(plan);
        std::vector<PointRecord*> taken;
        while (PointRecord* r = state.takeNext(true))
            taken.push_back(r);
        QCOMPARE(taken.size(), std::size_t {3});
        for (std::size_t i = 0; i < taken.size(); ++i) {
            if (i == 1) {
                state.settle(*taken[i], PointStatus::Interrupted);
                continue;
            }
            PointResult r;
            r.finalLoss = 1.0;
            taken[i]->result = r;
            state.settle(*taken[i], PointStatus::Done);
        }
        QVERIFY(!state.group(0).rungs[0].settled);
        QVERIFY(!state.hasDue()); // no next rung from a partial one
    }

    void figuresDrawKeptPointsWithBands()
    {
        StudyTable t;
        t.axes = {parseAxis("mode=sync,async", "--sweep"), parseAxis("workers=1..4", "--sweep")};
        t.seeds = true;
        const double seconds[2][3] = {{8.0, 4.0, 2.0}, {8.0, 5.0, 4.0}};
        for (int m = 0; m < 2; ++m) {
            for (int w = 0; w < 3; ++w) {
                for (int s = 0; s < 3; ++s) {
                    StudyTable::Row row;
                    row.id = "m" + std::to_string(m) + "w" + std::to_string(w) + "s" + std::to_string(s);
                    row.values = {
                        t.axes[0].values[static_cast<std::size_t>(m)], t.axes[1].values[static_cast<std::size_t>(w)]};
                    row.seed = std::to_string(s);
                    row.status = PointStatus::Done;
                    row.kept = true;
                    PointResult r;
                    r.mode = row.values[0];
                    r.clock = "virtual";
                    r.seconds = seconds[m][w] * (1.0 + 0.1 * (s - 1)); // the seeds spread by 10% each way
                    r.samplesPerSecond = 100.0 / r.seconds;
                    r.finalLoss = 0.5;
                    r.meanStaleness = m == 1 ? w : 0.0;
                    row.result = r;
                    t.rows.push_back(row);
                }
            }
        }
        // A candidate that was not kept must not be drawn.
        StudyTable::Row dropped = t.rows.front();
        dropped.kept = false;
        dropped.result->seconds = 1000.0;
        t.rows.push_back(dropped);
        const std::vector<StudyFigure> figures = studyFigures(t);
        auto find = [&](const std::string& file) -> const StudyFigure* {
            for (const StudyFigure& f : figures) {
                if (f.file == file)
                    return &f;
            }
            return nullptr;
        };
        const StudyFigure* time = find("time-vs-workers.png");
        QVERIFY(time);
        QVERIFY(time->logX);
        QCOMPARE(time->logXBase, 2.0);
        QCOMPARE(time->lines.size(), std::size_t {2});
        QCOMPARE(time->lines[0].name, std::string("sync"));
        const FigurePoint& p = time->lines[0].points[1]; // sync, 2 workers
        QCOMPARE(p.x, 2.0);
        QCOMPARE(p.median, 4.0);
        QVERIFY(std::abs(p.low - 3.6) < 1e-12 && std::abs(p.high - 4.4) < 1e-12);
        QCOMPARE(p.folders.size(), std::size_t {3});
        QCOMPARE(p.folders.front(), std::string("points/m0w1s1")); // the median run first
        const StudyFigure* speedup = find("speedup-vs-workers.png");
        QVERIFY(speedup);
        QCOMPARE(speedup->lines.back().name, std::string("ideal"));
        QCOMPARE(speedup->lines[0].points[2].median, 4.0); // sync: 8 s at 1 worker, 2 s at 4
        QCOMPARE(speedup->lines[1].points[2].median, 2.0); // async: 8 s, then 4 s
        const StudyFigure* efficiency = find("efficiency-vs-workers.png");
        QVERIFY(efficiency);
        QCOMPARE(efficiency->lines[1].points[2].median, 0.5);
        const StudyFigure* staleness = find("staleness-vs-workers.png");
        QVERIFY(staleness);
        QCOMPARE(staleness->lines.size(), std::size_t {1}); // async only: sync never pushes stale gradients
        QVERIFY(find("throughput-vs-workers.png"));
        QVERIFY(find("idle-vs-workers.png"));
        QVERIFY(!find("accuracy-vs-workers.png")); // no accuracy without classes
        QVERIFY(!find("time-vs-mode.png")); // a choice is a line, never an x axis
    }

    void aSpeedupLineThatStartsLaterSaysSo()
    {
        // backup cannot run at 1 worker: its speedup is over its own 2 workers, and the chart must say it.
        StudyTable t;
        t.axes = {parseAxis("mode=sync,backup", "--sweep"), parseAxis("workers=1..4", "--sweep")};
        for (int m = 0; m < 2; ++m) {
            for (int w = m; w < 3; ++w) {
                StudyTable::Row row;
                row.id = "m" + std::to_string(m) + "w" + std::to_string(w);
                row.values
                    = {t.axes[0].values[static_cast<std::size_t>(m)], t.axes[1].values[static_cast<std::size_t>(w)]};
                row.status = PointStatus::Done;
                row.kept = true;
                PointResult r;
                r.mode = row.values[0];
                r.seconds = 8.0 / (1 << w);
                r.finalLoss = 0.5;
                row.result = r;
                t.rows.push_back(row);
            }
        }
        for (const StudyFigure& f : studyFigures(t)) {
            if (f.file != "speedup-vs-workers.png" && f.file != "efficiency-vs-workers.png")
                continue;
            const std::string own = "; backup: against its own time at 2 workers";
            QVERIFY2(f.note.size() > own.size() && f.note.compare(f.note.size() - own.size(), own.size(), own) == 0,
                f.note.c_str());
            QCOMPARE(f.lines[1].points.front().median, 1.0);
        }
        t.rows.erase(std::remove_if(t.rows.begin(), t.rows.end(),
                         [](const StudyTable::Row& r) { return r.values[0] == "backup"; }),
            t.rows.end());
        for (const StudyFigure& f : studyFigures(t))
            QVERIFY2(f.note.find("against its own") == std::string::npos, f.note.c_str());
    }

    // A run that never reached the target counts as the slowest in its point's median, as --best-of ranks it: a
    // median of the seeds that got there alone once drew a point at one lucky seed's time where two never did.
    void aRunThatMissedTheTargetCountsAsTheSlowest()
    {
        StudyTable t;
        t.axes = {parseAxis("workers=1..4", "--sweep")};
        t.seeds = true;
        t.target = true;
        // seconds to target per seed (< 0: not reached): all reached; one of three missed; two of three missed
        const double toTarget[3][3] = {{7.2, 8.0, 8.8}, {3.6, 4.0, -1.0}, {2.0, -1.0, -1.0}};
        for (int w = 0; w < 3; ++w) {
            for (int s = 0; s < 3; ++s) {
                StudyTable::Row row;
                row.id = "w" + std::to_string(w) + "s" + std::to_string(s);
                row.values = {t.axes[0].values[static_cast<std::size_t>(w)]};
                row.seed = std::to_string(s);
                row.status = PointStatus::Done;
                row.kept = true;
                PointResult r;
                r.mode = "sync";
                r.seconds = 10.0;
                r.targetSet = true;
                r.secondsToTarget = toTarget[w][s];
                r.finalLoss = 0.5;
                row.result = r;
                t.rows.push_back(row);
            }
        }
        const std::vector<StudyFigure> figures = studyFigures(t);
        const auto time = std::find_if(figures.begin(), figures.end(),
            [](const StudyFigure& f) { return f.file == "time-to-target-vs-workers.png"; });
        QVERIFY(time != figures.end());
        QCOMPARE(time->lines.size(), std::size_t {1});
        const std::vector<FigurePoint>& points = time->lines[0].points;
        QCOMPARE(points.size(), std::size_t {2}); // none at 4 workers: two of its three runs never got there
        QCOMPARE(points[0].median, 8.0);
        QCOMPARE(points[1].x, 2.0);
        QCOMPARE(points[1].median, 4.0); // 3.6, 4.0 and the slowest (the two that got there alone: 3.8)
        QCOMPARE(points[1].low, 3.6);
        QCOMPARE(points[1].high, 4.0); // the band spans the runs with a value
        QCOMPARE(points[1].folders.size(), std::size_t {3}); // every run stays one click away
        for (const char* said : {"3 runs did not reach the target", "outside its band (workers=2: 1 of 3)",
                 "\nno point where half or more did not reach the target (workers=4: 2 of 3)"})
            QVERIFY2(time->note.find(said) != std::string::npos, time->note.c_str());
        // Speedup is over the same medians: 8 / 4 at 2 workers, and no point at 4.
        const auto speedup = std::find_if(
            figures.begin(), figures.end(), [](const StudyFigure& f) { return f.file == "speedup-vs-workers.png"; });
        QVERIFY(speedup != figures.end());
        QCOMPARE(speedup->lines[0].points.size(), std::size_t {2});
        QCOMPARE(speedup->lines[0].points[1].median, 2.0);
        QVERIFY2(speedup->note.find("3 runs did not reach the target") != std::string::npos, speedup->note.c_str());
    }

    // Without a target, a run that diverged stopped early: its short time is no speed. It has no time and no final
    // loss, and counts as the worst in both medians (an even number of runs: the two middle ones' mean).
    void aDivergedRunHasNoTimeAndCountsAsTheWorst()
    {
        StudyTable t;
        t.axes = {parseAxis("workers=1..4", "--sweep")};
        t.seeds = true;
        struct Run
        {
            int w;
            double seconds;
            bool diverged;
        };
        // 1 worker: one of two diverged (after 1 s); 2: none of two; 4: one of four
        const Run runs[] = {{0, 1.0, true}, {0, 8.0, false}, {1, 4.0, false}, {1, 4.4, false}, {2, 2.0, false},
            {2, 2.2, false}, {2, 2.4, false}, {2, 0.5, true}};
        int id = 0;
        for (const Run& run : runs) {
            StudyTable::Row row;
            row.id = "r" + std::to_string(id++);
            row.values = {t.axes[0].values[static_cast<std::size_t>(run.w)]};
            row.status = run.diverged ? PointStatus::Diverged : PointStatus::Done;
            row.kept = true;
            PointResult r;
            r.mode = "sync";
            r.seconds = run.seconds;
            r.diverged = run.diverged;
            r.finalLoss = run.diverged ? std::nan("") : 0.5;
            row.result = r;
            t.rows.push_back(row);
        }
        const std::vector<StudyFigure> figures = studyFigures(t);
        auto find = [&](const std::string& file) {
            const auto f
                = std::find_if(figures.begin(), figures.end(), [&](const StudyFigure& g) { return g.file == file; });
            return f == figures.end() ? nullptr : &*f;
        };
        const StudyFigure* time = find("time-vs-workers.png");
        QVERIFY(time);
        const std::vector<FigurePoint>& points = time->lines[0].points;
        QCOMPARE(points.size(), std::size_t {2}); // none at 1 worker: one of its two runs diverged
        QCOMPARE(points[0].median, 4.2);
        QVERIFY(std::abs(points[1].median - 2.3) < 1e-12); // 2.0, 2.2, 2.4 and the worst: (2.2 + 2.4) / 2
        QCOMPARE(points[1].high, 2.4);
        QCOMPARE(points[1].withoutValue, 1);
        for (const char* said : {"2 runs diverged", "outside its band (workers=4: 1 of 4)",
                 "\nno point where half or more diverged (workers=1: 1 of 2)"})
            QVERIFY2(time->note.find(said) != std::string::npos, time->note.c_str());
        const StudyFigure* loss = find("final-loss-vs-workers.png");
        QVERIFY(loss);
        QCOMPARE(loss->lines[0].points.size(), std::size_t {2});
        QCOMPARE(loss->lines[0].points[1].median, 0.5);
        // Speedup and efficiency start at 2 workers, and say so.
        for (const char* file : {"speedup-vs-workers.png", "efficiency-vs-workers.png"}) {
            const StudyFigure* f = find(file);
            QVERIFY(f);
            QCOMPARE(f->lines[0].points.front().x, 2.0);
            QVERIFY2(f->note.find("sync: against its own time at 2 workers") != std::string::npos, f->note.c_str());
        }
        QVERIFY(std::abs(find("speedup-vs-workers.png")->lines[0].points[1].median - 4.2 / 2.3) < 1e-12);
    }

    void figuresShowTheChosenCandidate()
    {
        // --best-of lr: a chart of the kept lr per line, so "each at its own best" can be read off.
        StudyTable t;
        t.axes = {parseAxis("mode=sync,async", "--sweep"), parseAxis("workers=1..4", "--sweep")};
        t.bestOf = "lr";
        const char* kept[2][3] = {{"0.4", "0.4", "1.6"}, {"0.4", "0.1", "0.025"}};
        for (int m = 0; m < 2; ++m) {
            for (int w = 0; w < 3; ++w) {
                for (const char* lr : {"0.025", "0.1", "0.4", "1.6"}) {
                    StudyTable::Row row;
                    row.id = "m" + std::to_string(m) + "w" + std::to_string(w) + "lr" + lr;
                    row.values = {
                        t.axes[0].values[static_cast<std::size_t>(m)], t.axes[1].values[static_cast<std::size_t>(w)]};
                    row.candidate = lr;
                    row.status = PointStatus::Done;
                    row.kept = std::string(lr) == kept[m][w];
                    PointResult r;
                    r.mode = row.values[0];
                    r.seconds = 1.0;
                    r.finalLoss = 0.5;
                    row.result = r;
                    t.rows.push_back(row);
                }
            }
        }
        const std::vector<StudyFigure> figures = studyFigures(t);
        const auto chosen = std::find_if(
            figures.begin(), figures.end(), [](const StudyFigure& f) { return f.file == "best-lr-vs-workers.png"; });
        QVERIFY(chosen != figures.end());
        QVERIFY(chosen->logY); // kept values from 0.025 to 1.6: more than a factor 20
        QCOMPARE(chosen->lines.size(), std::size_t {2});
        for (int m = 0; m < 2; ++m) {
            const FigureLine& line = chosen->lines[static_cast<std::size_t>(m)];
            QCOMPARE(line.points.size(), std::size_t {3});
            for (int w = 0; w < 3; ++w) {
                const FigurePoint& p = line.points[static_cast<std::size_t>(w)];
                QCOMPARE(p.median, std::stod(kept[m][w]));
                QCOMPARE(p.low, p.median);
                QCOMPARE(p.folders.size(), std::size_t {1}); // the kept point alone
            }
        }
        // A choice at the grid's edge is named (0.025 and 1.6 of 0.025 ... 1.6): the best may lie beyond it.
        QVERIFY2(
            chosen->note.find("\non the grid's edge, a better lr may lie beyond it: mode=sync, workers=4: 1.6 (the "
                              "largest); mode=async, workers=4: 0.025 (the smallest)")
                != std::string::npos,
            chosen->note.c_str());
        QVERIFY2(chosen->note.find("workers=1") == std::string::npos, chosen->note.c_str()); // 0.4 is inside
        // No such chart without --best-of (figuresDrawKeptPointsWithBands has none either).
        t.bestOf.clear();
        for (const StudyFigure& f : studyFigures(t))
            QVERIFY2(f.file.rfind("best-", 0) != 0, f.file.c_str());
    }

    void tableReadsBackFromStudyJson()
    {
        StudyTable t;
        t.axes = {parseAxis("workers=1,2", "--sweep")};
        t.bestOf = "lr";
        StudyTable::Row row;
        row.id = "workers-1_lr-0.1";
        row.values = {"1"};
        row.candidate = "0.1";
        row.status = PointStatus::Diverged;
        row.kept = true;
        PointResult r;
        r.mode = "async";
        r.finalLoss = std::nan("");
        r.diverged = true;
        r.digest = "abc";
        row.result = r;
        t.rows.push_back(row);
        const StudyTable back = readTable(tableJson(t, {}), "study.json");
        QCOMPARE(resultsCsv(back), resultsCsv(t));
        QCOMPARE(back.rows.front().status, PointStatus::Diverged);
        QVERIFY(std::isnan(back.rows.front().result->finalLoss));
    }
};

QTEST_GUILESS_MAIN(TestStudy)
#include "test_study.moc"
