// The columns' modes in the window (offscreen): a column's header picks its mode and knob, and picking the other
// column's mode swaps them; headless arguments run the columns' modes with their own knobs; the push learning rate
// applies live; knobs are what their boxes show; a column's axis counts its mode's unit.
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/WindowOptions.h"

#include "ui/charts/AccuracyChart.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TrendChart.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <string>

using namespace sgdscope;
using namespace sgdscope::testing;
using namespace sgdscope::ui;

class TestWindowModes : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        useOwnSettings("test_window_modes");
        QVERIFY(m_dir.isValid());
    }

    // `--mode ssp,backup` on the window's command line: the columns' headers, titles, file stems and lower charts
    // follow the modes (backup is sync-like: wait per update; ssp pushes: staleness), each column trains its own
    // mode, and S set in the header while running reaches the ssp trainer: with S = 0 and 2 workers no push can
    // be staler than the other worker's one push, where S = 1000 and an 8x straggler gave about 7.
    void aColumnsHeaderPicksItsModeAndKnob()
    {
        const SessionSettings s = windowSettings({{"mode", "ssp,backup"}, {"workers", "2"}, {"slow", "1:8"},
            {"ssp-bound", "1000"}, {"layers", "1,64,64,1"}});
        QCOMPARE(s.modes.names[LeftColumn], QStringLiteral("ssp"));
        QCOMPARE(s.modes.names[RightColumn], QStringLiteral("backup"));
        QCOMPARE(s.modes.sspBound, 1000);
        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        ModeColumn* ssp = w.column(LeftColumn);
        ModeColumn* backup = w.column(RightColumn);
        QCOMPARE(ssp->modeBox()->currentText(), QStringLiteral("SSP"));
        QCOMPARE(backup->modeBox()->currentText(), QStringLiteral("Backup"));
        // Each header has its mode's knob: S up to the box's end, B up to P - 1; the knob of sync or async is none.
        QVERIFY(!ssp->knobBox()->isHidden() && ssp->lambdaBox()->isHidden());
        QCOMPARE(ssp->knobLabel()->text(), QStringLiteral("S ="));
        QCOMPARE(ssp->knobBox()->value(), 1000);
        QCOMPARE(backup->knobLabel()->text(), QStringLiteral("B ="));
        QCOMPARE(backup->knobBox()->value(), 1);
        QCOMPARE(backup->knobBox()->maximum(), 1);
        QVERIFY2(ssp->knobBox()->toolTip().contains(QStringLiteral("ssp mode")), qPrintable(ssp->knobBox()->toolTip()));
        // The comparison names both modes, in their colours' order.
        QCOMPARE(w.comparison(0)->title(), QStringLiteral("SSP vs Backup: loss against samples seen"));
        QCOMPARE(w.comparison(1)->title(), QStringLiteral("SSP vs Backup: loss against seconds"));
        QVERIFY2(w.accuracyChart()->title().startsWith(QStringLiteral("SSP vs Backup: ")),
            qPrintable(w.accuracyChart()->title()));
        QCOMPARE(w.comparison(0)->curveName(0), QStringLiteral("SSP (smoothed)"));
        QCOMPARE(w.comparison(0)->curveName(1), QStringLiteral("Backup (smoothed)"));
        // The lower charts follow the family: backup waits per update; ssp has both, staleness and its waits at
        // the bound.
        QCOMPARE(ssp->lossChart()->title(), QStringLiteral("SSP loss"));
        QCOMPARE(ssp->lossChart()->exportName(), QStringLiteral("ssp-loss"));
        QCOMPARE(ssp->histogram()->title(), QStringLiteral("SSP staleness"));
        QCOMPARE(ssp->histogram()->exportName(), QStringLiteral("ssp-staleness"));
        QVERIFY(!ssp->trend());
        QCOMPARE(ssp->boundWaits()->title(), QStringLiteral("SSP wait at its bound"));
        QCOMPARE(ssp->boundWaits()->exportName(), QStringLiteral("ssp-bound-wait"));
        QVERIFY(!backup->boundWaits());
        QCOMPARE(backup->histogram()->title(), QStringLiteral("Backup wait per update"));
        QCOMPARE(backup->histogram()->exportName(), QStringLiteral("backup-wait"));
        QCOMPARE(backup->trend()->exportName(), QStringLiteral("backup-wait-trend"));

        w.controller()->start();
        QTRY_VERIFY2_WITH_TIMEOUT(
            w.series(LeftColumn).points().size() > 50 && w.series(RightColumn).status().updates > 20,
            qPrintable(w.lastError()), 60000);
        // Each column trains its own mode: backup's waits per update, ssp's waits at its bound per push (one per
        // push; an update of backup is not a push).
        QVERIFY(!w.series(RightColumn).status().waitDecades.empty());
        std::int64_t sspWaits = 0;
        for (const std::int64_t n : w.series(LeftColumn).status().waitDecades)
            sspWaits += n;
        QVERIFY(sspWaits > 0);
        // Some push was stale (a bin beyond 0): at once on a quiet machine; on a busy one the workers may have taken
        // turns in lockstep for the first pushes, so this waits for it as the check below does.
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().stalenessCounts.size() > 1, 30000);
        // With S = 1000 the straggler's pushes are stale by about the fast worker's pushes in between.
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(w.series(LeftColumn).points().begin(), w.series(LeftColumn).points().end(),
                                     [](const LossPoint& p) { return p.staleness >= 3; }),
            30000);

        // S = 0 in the header, while running.
        ssp->knobBox()->setValue(0);
        QCOMPARE(w.controller()->runningSettings().modes.sspBound, 0);
        Marker change;
        QTRY_VERIFY_WITH_TIMEOUT(
            std::any_of(w.series(LeftColumn).markers().begin(), w.series(LeftColumn).markers().end(),
                [&](const Marker& m) {
                    change = m;
                    return m.text.endsWith(QStringLiteral(" S=0"));
                }),
            10000);
        QTRY_VERIFY_WITH_TIMEOUT(w.series(LeftColumn).status().updates > change.index + 200, 60000);
        std::int64_t after = 0;
        std::int64_t stalest = 0;
        for (const LossPoint& p : w.series(LeftColumn).points()) {
            if (p.index > change.index) {
                ++after;
                stalest = std::max(stalest, p.staleness);
            }
        }
        QVERIFY(after > 20);
        QVERIFY2(stalest <= 1, qPrintable(QStringLiteral("staleness %1 after S = 0").arg(stalest)));
        // ... and its fast worker is now held at the bound: its pushes' waits are measured, not zero.
        double heldLongest = 0.0;
        for (const LossPoint& p : w.series(LeftColumn).points()) {
            if (p.index > change.index)
                heldLongest = std::max(heldLongest, p.waitSeconds);
        }
        QVERIFY2(heldLongest > 0, "no push after S = 0 was held at the bound");
        // The backup column's marks carry its own knob.
        QVERIFY(!w.series(RightColumn).markers().empty());
        QVERIFY2(w.series(RightColumn).markers().back().text.endsWith(QStringLiteral(" B=1")),
            qPrintable(w.series(RightColumn).markers().back().text));

        // Saved and opened again: the folder's two modes fill the columns.
        w.controller()->pause();
        QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->digest(LeftColumn).isEmpty(), 10000);
        QTest::qWait(200);
        const QString folder = m_dir.filePath(QStringLiteral("ssp-backup"));
        QCOMPARE(w.saveRun(folder), QString());
        const Json summary = readJson(folder + QStringLiteral("/summary.json"));
        QCOMPARE(summary.at("runs").at(0).at("mode").get<std::string>(), std::string("ssp"));
        QCOMPARE(summary.at("runs").at(1).at("mode").get<std::string>(), std::string("backup"));
        QVERIFY(summary.at("runs").at(0).contains("staleness"));
        QVERIFY(summary.at("runs").at(1).contains("update_wait"));
        QCOMPARE(summary.at("config").at("ssp-bound").get<int>(), 1000); // as the run started
        MainWindow other; // (sync | async)
        QCOMPARE(other.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("Sync"));
        QCOMPARE(other.openRun(folder), QString());
        QCOMPARE(other.column(LeftColumn)->modeBox()->currentText(), QStringLiteral("SSP"));
        QCOMPARE(other.column(RightColumn)->modeBox()->currentText(), QStringLiteral("Backup"));
        QCOMPARE(other.column(RightColumn)->histogram()->title(), QStringLiteral("Backup wait per update"));
        QCOMPARE(other.series(LeftColumn).points().size(), w.series(LeftColumn).points().size());
        QCOMPARE(other.series(RightColumn).status().updates, w.series(RightColumn).status().updates);
        QCOMPARE(other.comparison(0)->title(), QStringLiteral("SSP vs Backup: loss against samples seen"));
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // Picking in one column the mode the other shows swaps them; a new mode waits for Reset while a run goes on.
    void pickingTheOtherColumnsModeSwapsThem()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"preset", "parabola"}})), QString());
        ModeColumn* left = w.column(LeftColumn);
        ModeColumn* right = w.column(RightColumn);
        QCOMPARE(left->modeBox()->currentText(), QStringLiteral("Sync"));
        QVERIFY(left->knobBox()->isHidden() && left->lambdaBox()->isHidden() && left->knobLabel()->isHidden());
        emit left->modeBox()->activated(left->modeBox()->findData(QStringLiteral("async")));
        QCOMPARE(w.panel()->settings().modes.names[LeftColumn], QStringLiteral("async"));
        QCOMPARE(w.panel()->settings().modes.names[RightColumn], QStringLiteral("sync"));
        QCOMPARE(left->modeBox()->currentText(), QStringLiteral("Async"));
        QCOMPARE(right->modeBox()->currentText(), QStringLiteral("Sync"));
        QCOMPARE(left->histogram()->title(), QStringLiteral("Async staleness")); // idle: shown at once
        QCOMPARE(right->histogram()->title(), QStringLiteral("Sync wait per update"));
        QCOMPARE(w.comparison(0)->title(), QStringLiteral("Async vs Sync: loss against samples seen"));
        QVERIFY(left->modeBox()->toolTip().contains(QStringLiteral("swaps")));

        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(RightColumn).status().updates > 5, 20000);
        QSignalSpy restart(w.controller(), &Controller::restartNeeded);
        emit right->modeBox()->activated(right->modeBox()->findData(QStringLiteral("dc-asgd")));
        QVERIFY(!restart.isEmpty() && restart.last().at(0).toBool());
        // The charts still show the running mode; the header says when the new one comes.
        QCOMPARE(right->modeBox()->currentText(), QStringLiteral("DC-ASGD"));
        QVERIFY(!right->lambdaBox()->isHidden());
        QCOMPARE(right->lambdaBox()->value(), 0.04);
        QCOMPARE(right->shownMode(), QStringLiteral("sync"));
        QCOMPARE(right->histogram()->title(), QStringLiteral("Sync wait per update"));
        QCOMPARE(right->noteLabel()->text(), QStringLiteral("applies on Reset (Sync runs until then)"));
        QCOMPARE(w.controller()->runningSettings().modes.names[RightColumn], QStringLiteral("sync"));
        w.controller()->reset();
        QCOMPARE(right->shownMode(), QStringLiteral("dc-asgd"));
        QCOMPARE(right->histogram()->title(), QStringLiteral("DC-ASGD staleness"));
        QVERIFY(right->noteLabel()->isHidden());
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(w.series(RightColumn).status().updates > 5, 20000);
        QVERIFY(w.series(RightColumn).status().waitDecades.empty()); // pushes: dc-asgd trains
        w.controller()->reset();
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // Run > Copy command line and a simulated cluster's child run the columns' modes with their own knobs only;
    // an MPI job of one process runs the column that needs no parameter server.
    void headlessArgumentsRunTheColumnsModes()
    {
        SessionSettings s;
        s.engine = QStringLiteral("sim");
        s.modes.names = {QStringLiteral("ssp"), QStringLiteral("local-sgd")};
        const QString args = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(args.contains(QStringLiteral("--mode ssp,local-sgd --ssp-bound 3 --local-steps 8")), qPrintable(args));
        QVERIFY2(!args.contains(QStringLiteral("--backup-workers")) && !args.contains(QStringLiteral("--dc-lambda")),
            qPrintable(args));
        // It is a valid headless configuration (the knobs belong to the modes given).
        const RunConfig c = headlessConfig(s, 10);
        QCOMPARE(c.modesText(), std::string("ssp,local-sgd"));
        QCOMPARE(c.localSteps, 8);
        // The window keeps lr constant: a preset's schedule is turned off in the command (and the simulated
        // columns' children), and a preset without one says nothing of it.
        QVERIFY2(!args.contains(QStringLiteral("--lr-schedule")), qPrintable(args));
        SessionSettings cnn;
        cnn.preset = QStringLiteral("fashion-cnn");
        QVERIFY(headlessArguments(cnn, 0, QStringLiteral("out"))
                    .join(QLatin1Char(' '))
                    .contains(QStringLiteral("--lr-schedule constant")));
        QVERIFY(headlessConfig(cnn, 10).lrSchedule == LrSchedule::Constant);
        // The default pair is headless's default (both): no --mode; `--mode both` on the window's command line is it.
        QVERIFY(!headlessArguments(SessionSettings(), 0, QStringLiteral("out")).contains(QStringLiteral("--mode")));
        const SessionSettings both = windowSettings({{"mode", "async,sync"}, {"mode", "both"}});
        QCOMPARE(both.modes.names[LeftColumn], QStringLiteral("sync"));
        QCOMPARE(both.modes.names[RightColumn], QStringLiteral("async"));
        // MPI: one process runs local-sgd only (dc-asgd needs a parameter server and a worker).
        s.engine = QStringLiteral("mpi");
        s.workers = 1;
        s.modes.names = {QStringLiteral("dc-asgd"), QStringLiteral("local-sgd")};
        const QString one = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(one.contains(QStringLiteral("--mode local-sgd --local-steps 8")), qPrintable(one));
        QVERIFY2(!one.contains(QStringLiteral("--dc-lambda")), qPrintable(one));
        s.workers = 3;
        const QString three = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(three.contains(QStringLiteral("--mode dc-asgd,local-sgd --dc-lambda 0.04 --local-steps 8")),
            qPrintable(three));
    }

    // `--async-lr staleness` on the window's command line sets the panel's push learning rate (not a plain run
    // option), Copy command line carries it, and a running ssp column applies each push of b samples with
    // lr x b / B / max(1, s): its mean applied rate is what the staleness histogram (every push) predicts, which is
    // below lr x b / B as soon as a push is 2 or more stale (the scaled rule gives lr x b / B exactly). Set to scaled
    // while running, every later push has lr x b / B: the mean moves as that predicts.
    void pushLearningRateFromTheCommandLineAppliesLive()
    {
        const SessionSettings s = windowSettings(
            {{"async-lr", "staleness"}, {"mode", "sync,ssp"}, {"workers", "2"}, {"slow", "1:8"}, {"ssp-bound", "50"}});
        QCOMPARE(s.pushLearningRate, QStringLiteral("staleness"));
        QVERIFY(s.option(QStringLiteral("async-lr")).isEmpty()); // the control's, not a run option
        const QString args = headlessArguments(s, 0, QStringLiteral("out")).join(QLatin1Char(' '));
        QVERIFY2(args.contains(QStringLiteral("--async-lr staleness")), qPrintable(args));
        QCOMPARE(headlessConfig(s, 10).asyncLr, AsyncLearningRate::Staleness);
        // Without a pushing mode it has nothing to divide: refused on the command line, left out of the command.
        QVERIFY(refusalOf({{"async-lr", "staleness"}, {"mode", "sync,backup"}})
                    .contains(QStringLiteral("applies to modes that push one by one")));
        SessionSettings teamOnly = s;
        teamOnly.modes.names = {QStringLiteral("sync"), QStringLiteral("backup")};
        QVERIFY(!headlessArguments(teamOnly, 0, QStringLiteral("out")).contains(QStringLiteral("--async-lr")));

        MainWindow w;
        QCOMPARE(w.applySettings(s), QString());
        QComboBox* pushLr = w.panel()->pushLearningRateBox();
        QCOMPARE(pushLr->currentData().toString(), QStringLiteral("staleness"));
        QVERIFY(pushLr->isEnabled());
        QCOMPARE(w.panel()->settings().pushLearningRate, QStringLiteral("staleness"));
        // A push is one of 2 equal slices of the batch: b / B = 1/2, and lr x b / B as a push applies it (a float).
        const int batch = w.panel()->settings().globalBatch();
        QVERIFY2(batch > 0 && batch % 2 == 0, qPrintable(QString::number(batch)));
        const double lr = static_cast<double>(static_cast<float>(w.panel()->settings().learningRate * 0.5));
        // Sums over the column's staleness histogram: pushes, pushes 2 or more stale, and lr / max(1, s).
        struct Pushes
        {
            std::int64_t all = 0;
            std::int64_t stale = 0;
            double divided = 0.0;
        };
        auto pushesOf = [lr](const ModeStatus& st) {
            Pushes p;
            for (std::size_t k = 0; k < st.stalenessCounts.size(); ++k) {
                p.all += st.stalenessCounts[k];
                p.stale += k >= 2 ? st.stalenessCounts[k] : 0;
                p.divided += static_cast<double>(st.stalenessCounts[k]) * lr
                    / static_cast<double>(std::max<std::size_t>(1, k));
            }
            return p;
        };
        constexpr double rounding = 1e-6; // relative: each push's rate is a float
        w.controller()->start();
        QTRY_VERIFY2_WITH_TIMEOUT(
            pushesOf(w.series(RightColumn).status()).stale >= 5, qPrintable(w.lastError()), 60000);
        const ModeStatus stale = w.series(RightColumn).status();
        const Pushes p0 = pushesOf(stale);
        QVERIFY(!stale.stalenessTailFolded && !stale.diverged);
        const double predicted = p0.divided / static_cast<double>(p0.all);
        QVERIFY2(lr - predicted > 20 * rounding * lr, qPrintable(QStringLiteral("%1 of %2").arg(predicted).arg(lr)));
        QVERIFY2(std::abs(stale.meanLearningRate - predicted) < rounding * lr,
            qPrintable(QStringLiteral("mean lr %1, lr / max(1, s) over the pushes %2 (lr %3)")
                           .arg(stale.meanLearningRate)
                           .arg(predicted)
                           .arg(lr)));
        QVERIFY(w.statusLabel(RightColumn)->text().contains(QStringLiteral("mean push lr")));

        // Scaled, live: a change the session marks, and from then on every push has lr x b / B.
        pushLr->setCurrentIndex(pushLr->findData(QStringLiteral("scaled")));
        QCOMPARE(w.controller()->runningSettings().pushLearningRate, QStringLiteral("scaled"));
        QCOMPARE(w.controller()->state(), Controller::State::Running);
        QTRY_VERIFY_WITH_TIMEOUT(!w.series(RightColumn).markers().empty(), 10000);
        QVERIFY(!w.series(RightColumn).markers().back().text.contains(QStringLiteral("staleness")));
        const ModeStatus before = w.series(RightColumn).status(); // after the change: later pushes have lr
        const Pushes p1 = pushesOf(before);
        QTRY_VERIFY_WITH_TIMEOUT(pushesOf(w.series(RightColumn).status()).stale >= p1.stale + 5, 60000);
        const ModeStatus after = w.series(RightColumn).status();
        const Pushes p2 = pushesOf(after);
        QVERIFY(!after.stalenessTailFolded && !after.diverged);
        const double constant
            = (before.meanLearningRate * static_cast<double>(p1.all) + lr * static_cast<double>(p2.all - p1.all))
            / static_cast<double>(p2.all);
        const double divided = (before.meanLearningRate * static_cast<double>(p1.all) + p2.divided - p1.divided)
            / static_cast<double>(p2.all);
        QVERIFY(constant - divided > 20 * rounding * lr); // the two rules differ over these pushes
        QVERIFY2(std::abs(after.meanLearningRate - constant) < rounding * lr,
            qPrintable(QStringLiteral("mean lr %1; scaled from the change gives %2, divided by max(1, s) %3")
                           .arg(after.meanLearningRate)
                           .arg(constant)
                           .arg(divided)));
        w.controller()->reset();
        // The columns without a pushing mode leave it nothing to do.
        emit w.column(RightColumn)
            ->modeBox()
            ->activated(w.column(RightColumn)->modeBox()->findData(QStringLiteral("backup")));
        QVERIFY(!pushLr->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // Knobs restored from QSettings are what their boxes offer (a stored lambda of -1 showed 0.000 and Start
    // failed); lambda's box shows a small lambda as it is; an MPI job's B beyond its backup's workers is refused on
    // the command line, and a B the panel cuts (fewer processes) is said in the column.
    void knobsAreWhatTheirBoxesShow()
    {
        {
            QSettings stored;
            stored.setValue(QStringLiteral("modes"), QStringList {QStringLiteral("ssp"), QStringLiteral("dc-asgd")});
            stored.setValue(QStringLiteral("sspBound"), 5000);
            stored.setValue(QStringLiteral("backupWorkers"), -3);
            stored.setValue(QStringLiteral("localSteps"), 0);
            stored.setValue(QStringLiteral("dcLambda"), -1.0);
        }
        {
            MainWindow restored;
            const ColumnModes modes = restored.panel()->settings().modes;
            QCOMPARE(modes.sspBound, 1000);
            QCOMPARE(modes.backupWorkers, 0);
            QCOMPARE(modes.localSteps, 1);
            QCOMPARE(modes.dcLambda, 0.0);
            QCOMPARE(restored.column(LeftColumn)->knobBox()->value(), 1000);
            QCOMPARE(restored.column(RightColumn)->lambdaBox()->value(), 0.0);
        }
        QSettings().clear();

        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"mode", "sync,dc-asgd"}, {"dc-lambda", "0.0004"}})), QString());
        QCOMPARE(w.column(RightColumn)->lambdaBox()->value(), 0.0004);
        QCOMPARE(w.column(RightColumn)->lambdaBox()->text(), QStringLiteral("0.0004"));
        QCOMPARE(w.panel()->settings().modes.dcLambda, 0.0004);
        w.column(RightColumn)->lambdaBox()->setValue(0.04);
        QCOMPARE(w.column(RightColumn)->lambdaBox()->text(), QStringLiteral("0.04"));

        // MPI: backup has a parameter server and P - 1 workers, so B = 3 of 4 processes applies nothing.
        const QString refused = w.applySettings(
            windowSettings({{"engine", "mpi"}, {"workers", "4"}, {"mode", "sync,backup"}, {"backup-workers", "3"}}));
        QVERIFY2(refused.contains(QStringLiteral("--backup-workers: 3 is not allowed in an MPI job of 4 processes")),
            qPrintable(refused));
        QCOMPARE(w.applySettings(windowSettings(
                     {{"engine", "mpi"}, {"workers", "4"}, {"mode", "sync,backup"}, {"backup-workers", "2"}})),
            QString());
        QCOMPARE(w.panel()->settings().modes.backupWorkers, 2);
        QVERIFY(w.column(RightColumn)->noteLabel()->isHidden());
        w.panel()->workersSlider()->setValue(3); // 3 processes: backup on 2 workers, B at most 1
        QCOMPARE(w.panel()->settings().modes.backupWorkers, 1);
        QVERIFY(!w.column(RightColumn)->noteLabel()->isHidden());
        QVERIFY2(w.column(RightColumn)->noteLabel()->text().startsWith(QStringLiteral("B = 2 is cut to 1: an MPI job")),
            qPrintable(w.column(RightColumn)->noteLabel()->text()));
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

    // A column's updates axis counts its mode's unit (local-sgd's rounds, a pushing mode's pushes), and a knob's
    // tooltip says when it applies: live on threads, at the next job on MPI.
    void columnsSayTheirModesUnits()
    {
        MainWindow w;
        QCOMPARE(w.applySettings(windowSettings({{"mode", "local-sgd,ssp"}})), QString());
        for (ModeColumn* c : {w.column(LeftColumn), w.column(RightColumn)})
            c->setXAxis(XAxisKind::Updates);
        QCOMPARE(
            w.column(LeftColumn)->lossChart()->xAxisTitle(), QStringLiteral("rounds (H local steps and an averaging)"));
        QCOMPARE(w.column(RightColumn)->lossChart()->xAxisTitle(), QStringLiteral("pushes"));
        w.column(RightColumn)->setXAxis(XAxisKind::Samples);
        QCOMPARE(w.column(RightColumn)->lossChart()->xAxisTitle(), QStringLiteral("samples seen"));
        QVERIFY(
            w.column(LeftColumn)->knobBox()->toolTip().contains(QStringLiteral("Applies live, from the next round")));
        w.panel()->engineBox()->setCurrentIndex(w.panel()->engineBox()->findData(QStringLiteral("mpi")));
        const QString tip = w.column(LeftColumn)->knobBox()->toolTip();
        QVERIFY2(
            tip.contains(QStringLiteral("Applies on Reset")) && !tip.contains(QStringLiteral("live")), qPrintable(tip));
        QTRY_COMPARE_WITH_TIMEOUT(w.controller()->liveThreads(), 0, 20000);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestWindowModes)
#include "test_window_modes.moc"
