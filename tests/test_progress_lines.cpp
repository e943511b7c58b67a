// What goes between the window and the processes it starts, as lines of JSON: a progress line keeps every value
// (a diverged loss stays non-finite, a broken line is refused), the session's settings carry the columns' modes and
// knobs (whose defaults are the run options'), and an external run's columns go where the window shows their modes.
#include "ui/ExternalRun.h"
#include "ui/ProgressJson.h"
#include "ui/SessionData.h"

#include "core/common/Json.h"
#include "core/run/RunConfig.h"

#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include <QTest>

using namespace sgdscope::ui;

class TestProgressLines : public QObject
{
    Q_OBJECT
private slots:
    void progressLinesCarryEveryValue()
    {
        MetricsBatch b;
        b.ready = true;
        b.notes << QStringLiteral("a note");
        b.points[LeftColumn].push_back({3, 96, 0.25, 1.5, 0, 0.001});
        b.points[RightColumn].push_back({7, 224, 0.5, std::nan(""), 4, 0.0});
        b.evals[RightColumn].push_back({7, 224, 0.5, 0.75, 0.625, true, 0.8, 0.6});
        TimeBin bin;
        bin.worker = 2;
        bin.bin = 1234;
        bin.seconds[TimeBin::Compute] = 0.000625f;
        bin.seconds[TimeBin::Wait] = 0.000375f;
        b.timeline[LeftColumn].push_back(bin);
        b.markers[LeftColumn].push_back({3, 96, 0.25, QStringLiteral("P=4")});
        ModeStatus& st = b.status[RightColumn];
        st.valid = true;
        st.updates = 7;
        st.samples = 224;
        st.seconds = 0.5;
        st.virtualClock = true;
        st.meanStaleness = 2.5;
        st.meanLearningRate = 0.0125;
        st.targetAccuracy = 0.875;
        st.workers.push_back({1.0, 0.6, 0.3, 0.05, 0.04, 0.01, 3});
        st.stalenessCounts = {1, 2, 4};
        st.waitDecades = {0, 5};
        const std::string line = sgdscope::dumpJson(metricsBatchJson(b), -1);
        QVERIFY(line.find('\n') == std::string::npos); // one line
        const MetricsBatch r = metricsBatchFromJson(sgdscope::parseJson(line, "line"));
        QVERIFY(r.ready);
        QCOMPARE(r.notes, b.notes);
        QCOMPARE(r.points[LeftColumn].size(), std::size_t {1});
        QCOMPARE(r.points[LeftColumn][0].waitSeconds, 0.001);
        QVERIFY(std::isnan(r.points[RightColumn][0].loss)); // a diverged loss stays non-finite
        QCOMPARE(r.points[RightColumn][0].staleness, std::int64_t {4});
        QCOMPARE(r.evals[RightColumn][0].testAccuracy, 0.6);
        QCOMPARE(r.timeline[LeftColumn][0].worker, 2);
        QCOMPARE(r.timeline[LeftColumn][0].bin, std::int64_t {1234});
        QCOMPARE(r.timeline[LeftColumn][0].seconds[TimeBin::Compute], 0.000625f);
        QCOMPARE(r.markers[LeftColumn][0].text, QStringLiteral("P=4"));
        QVERIFY(!r.status[LeftColumn].valid);
        QVERIFY(r.status[RightColumn].virtualClock);
        QCOMPARE(r.status[RightColumn].targetAccuracy, 0.875);
        QCOMPARE(r.status[RightColumn].meanLearningRate, 0.0125);
        QCOMPARE(r.status[RightColumn].targetLoss, -1.0);
        QCOMPARE(r.status[RightColumn].workers.size(), std::size_t {1});
        QCOMPARE(r.status[RightColumn].workers[0].transfer, 0.04);
        QCOMPARE(r.status[RightColumn].stalenessCounts, b.status[RightColumn].stalenessCounts);
        // A broken line is refused with a message, not taken half.
        QVERIFY_THROWS_EXCEPTION(std::exception, metricsBatchFromJson(sgdscope::parseJson(R"({"type":"batch"})", "x")));
    }

    // The window's settings reach a session child and back with the columns' modes and knobs, and the knobs'
    // defaults are the run options' (declared in two places: this catches them drifting apart).
    void sessionSettingsCarryTheColumnsModes()
    {
        const sgdscope::RunConfig config;
        const ColumnModes defaults;
        QCOMPARE(defaults.sspBound, static_cast<int>(config.sspBound));
        QCOMPARE(defaults.backupWorkers, config.backupWorkers);
        QCOMPARE(defaults.localSteps, config.localSteps);
        QCOMPARE(defaults.dcLambda, config.dcLambda);
        QCOMPARE(defaults.names[LeftColumn], QString::fromUtf8(sgdscope::modeName(config.modes.at(0))));
        QCOMPARE(defaults.names[RightColumn], QString::fromUtf8(sgdscope::modeName(config.modes.at(1))));
        SessionSettings s;
        s.modes.names = {QStringLiteral("ssp"), QStringLiteral("backup")};
        s.modes.sspBound = 7;
        s.modes.backupWorkers = 2;
        s.modes.localSteps = 5;
        s.modes.dcLambda = 0.25;
        s.pushLearningRate = QStringLiteral("staleness");
        const std::string line = sgdscope::dumpJson(sessionSettingsJson(s), -1);
        const SessionSettings r = sessionSettingsFromJson(sgdscope::parseJson(line, "line"));
        QVERIFY(r.modes == s.modes);
        QCOMPARE(r.pushLearningRate, QStringLiteral("staleness"));
        // The push learning rate is live too (an MPI job's settings all need a new job).
        SessionSettings constant = s;
        constant.pushLearningRate = QStringLiteral("constant");
        QVERIFY(constant.trainsDifferentlyFrom(s) && !constant.needsRestartComparedTo(s));
        SessionSettings mpi = s;
        mpi.engine = QStringLiteral("mpi");
        SessionSettings mpiConstant = mpi;
        mpiConstant.pushLearningRate = QStringLiteral("scaled");
        QVERIFY(mpiConstant.needsRestartComparedTo(mpi));
        // A knob is a live change; a column's mode needs a new run.
        SessionSettings knob = s;
        knob.modes.sspBound = 0;
        QVERIFY(knob.trainsDifferentlyFrom(s) && !knob.needsRestartComparedTo(s));
        SessionSettings swapped = s;
        std::swap(swapped.modes.names[LeftColumn], swapped.modes.names[RightColumn]);
        QVERIFY(swapped.needsRestartComparedTo(s));
    }

    // An MPI job of one process streams only the column it can run: its first stream column goes where the
    // window shows that mode.
    void externalColumnsGoWhereTheWindowShowsThem()
    {
        MetricsBatch b;
        b.points[LeftColumn].push_back({3, 96, 0.25, 1.5, 0, 0.001});
        b.status[LeftColumn].valid = true;
        b.status[LeftColumn].updates = 3;
        b.notes << QStringLiteral("kept");
        moveColumns(b, {RightColumn});
        QVERIFY(b.points[LeftColumn].empty() && !b.status[LeftColumn].valid);
        QCOMPARE(b.points[RightColumn].size(), std::size_t {1});
        QCOMPARE(b.status[RightColumn].updates, std::int64_t {3});
        QCOMPARE(b.notes, QStringList {QStringLiteral("kept")});
    }
};

QTEST_GUILESS_MAIN(TestProgressLines)
#include "test_progress_lines.moc"
