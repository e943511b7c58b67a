// The window's studies (offscreen): File > Open study shows a study folder's charts (values on hover, a click opens
// that run folder in the main window) and its kept points; `sgdscope DIR` and a dropped folder open a study as a run
// folder opens; Run > Sweep... starts a study from the panel's settings, shows its progress, can be cancelled and
// resumed, and opens the study's window when it ends. SGDSCOPE_SCREENSHOTS=DIR saves what the window showed there.
#include "StudyRuns.h"
#include "WindowTestTools.h"
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/StudyView.h"
#include "ui/SweepDialog.h"
#include "ui/WindowOptions.h"
#include "ui/charts/StudyChart.h"

#include <QDir>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace sgdscope;
using namespace sgdscope::testing;
using namespace sgdscope::ui;

namespace {
/// Saves a widget's picture into SGDSCOPE_SCREENSHOTS, if set (a person looks at them; the test does not).
void screenshot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("SGDSCOPE_SCREENSHOTS");
    if (dir.isEmpty() || !widget)
        return;
    QDir().mkpath(dir);
    widget->grab().save(QDir(dir).filePath(name + QStringLiteral(".png")));
}
} // namespace

class TestWindowStudy : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        useOwnSettings("test_window_study");
        QVERIFY(m_dir.isValid());
        SKIP_IF_FORK_UNDER_TSAN();
        m_study = m_dir.filePath(QStringLiteral("study"));
        const Study s = runStudy(m_study,
            words("--engine sim --cluster datacenter --steps 100 --mode sync,async --sweep workers=1..4 --seeds 2 "
                  "-j 2"));
        QCOMPARE(s.exitCode, 0);
    }

    void opensAStudy()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QCOMPARE(w.openStudy(m_study), QString());
        StudyView* view = w.studies().studyView();
        QVERIFY(view);
        QVERIFY(view->isVisible());
        QCOMPARE(view->study().status, QStringLiteral("complete"));
        QCOMPARE(view->study().finished, 12);
        QVERIFY(view->charts().size() >= 6);
        QCOMPARE(view->table()->rowCount(), 12); // every point is kept without --best-of
        // Hover: the nearest point's values; its band over the two seeds.
        StudyChart* time = nullptr;
        for (StudyChart* c : view->charts()) {
            if (c->figure().file == "time-vs-workers.png")
                time = c;
        }
        QVERIFY(time);
        const QString hover = time->describePoint(0, 2.1);
        QVERIFY2(hover.startsWith(QStringLiteral("sync · workers 2")), qPrintable(hover));
        QVERIFY2(hover.contains(QStringLiteral("median of 2 runs")), qPrintable(hover));
        screenshot(view, QStringLiteral("study-view"));
        // Click: that point's run folder opens in the main window.
        const QString folder = time->folderAt(1, 4.0);
        QVERIFY2(folder.startsWith(QStringLiteral("points/mode-async_workers-4_seed-")), qPrintable(folder));
        Q_EMIT time->pointClicked(folder);
        QCOMPARE(w.viewingFolder(), QDir(m_study).filePath(folder));
        // A table row's double-click does the same.
        Q_EMIT view->table()->cellDoubleClicked(0, 0);
        QCOMPARE(w.viewingFolder(), QDir(m_study).filePath(QStringLiteral("points/mode-sync_workers-1_seed-0")));
        // A folder that is no study is refused with the reason, and the study stays shown.
        QVERIFY(w.openStudy(m_dir.path()).contains(QStringLiteral("has no study.json")));
        QCOMPARE(view->study().finished, 12);
    }

    void aLongNoteIsWrappedToTheChartsWidth()
    {
        // The note under a chart's title names, for example, every kept choice at the grid's edge; Qt Charts cuts a
        // line wider than the chart ("mode=async, wo..."), so the note's lines are broken after their "; " (then ", ",
        // then at spaces, where one item is still too wide: at 420 px the first one is).
        StudyFigure f;
        f.file = "best-lr-vs-workers.png";
        f.title = "Chosen lr against workers";
        f.xTitle = "workers";
        f.yTitle = "lr";
        FigureLine line;
        line.name = "sync";
        line.mode = "sync";
        for (const double x : {4.0, 16.0}) {
            FigurePoint p;
            p.x = p.low = p.median = p.high = x;
            line.points.push_back(p);
        }
        f.lines.push_back(line);
        const QStringList items {QStringLiteral("on the grid's edge, a better lr may lie beyond it: mode=sync, "
                                                "workers=4: 0.08 (the largest)"),
            QStringLiteral("mode=sync, workers=16: 0.08 (the largest)"),
            QStringLiteral("mode=async, workers=4: 0.08 (the largest)"), QStringLiteral("1 more")};
        f.note = "kept: the candidate with the lowest final loss\n" + items.join(QStringLiteral("; ")).toStdString();
        StudyChart chart(f);
        QFont plain = chart.chartItem()->titleFont();
        plain.setBold(false);
        const QFontMetricsF metrics(plain);
        for (const int width : {1400, 640, 420}) {
            chart.resize(width, 420);
            chart.show();
            QCoreApplication::processEvents();
            const QString title = chart.chartItem()->title();
            const QString marker = QStringLiteral("font-size:small\">");
            const qsizetype from = title.indexOf(marker);
            QVERIFY2(from > 0 && title.endsWith(QStringLiteral("</span>")), qPrintable(title));
            QString note = title.mid(from + marker.size());
            note.chop(QStringLiteral("</span>").size());
            const QStringList lines = note.split(QStringLiteral("<br>"));
            for (const QString& l : lines)
                QVERIFY2(metrics.horizontalAdvance(l) <= width - 40,
                    qPrintable(
                        QStringLiteral("at %1 px: '%2' (%3 px)").arg(width).arg(l).arg(metrics.horizontalAdvance(l))));
            // What Qt Charts draws: it cuts a title too wide from its end ("..."), losing every later line.
            QString drawn;
            for (QGraphicsItem* item : chart.scene()->items())
                if (auto* text = dynamic_cast<QGraphicsTextItem*>(item);
                    text && text->toPlainText().contains(QStringLiteral("kept:")))
                    drawn = text->toPlainText();
            QVERIFY2(drawn.contains(QStringLiteral("1 more")),
                qPrintable(QStringLiteral("at %1 px: %2").arg(width).arg(drawn)));
            // Nothing is lost: the lines are the note's items, in order.
            QString joined = lines.join(QLatin1Char(' '));
            QVERIFY2(joined.startsWith(QStringLiteral("kept: the candidate with the lowest final loss ")),
                qPrintable(joined));
            joined.remove(0, QStringLiteral("kept: the candidate with the lowest final loss ").size());
            QCOMPARE(joined, items.join(QStringLiteral("; ")).toHtmlEscaped());
            if (width <= 640)
                QVERIFY2(lines.size() >= 3, qPrintable(note));
        }
    }

    void aStudyFolderOpensAsARunFolderDoes()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        QCOMPARE(w.openPath(m_study), QString()); // (a folder dropped, File > Open recent)
        QVERIFY(w.studies().studyView());
        // On the command line: options beside it are refused, a broken one is refused with the loader's message.
        const Result both = runProgram({m_study, QStringLiteral("--workers"), QStringLiteral("2")});
        QCOMPARE(both.exitCode, 2);
        QVERIFY2(both.err.contains(QStringLiteral("is a study, shown as it ran")), qPrintable(both.err));
        const QString broken = m_dir.filePath(QStringLiteral("broken-study"));
        QDir().mkpath(broken);
        {
            QFile f(QDir(broken).filePath(QStringLiteral("study.json")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"axes\": 3}");
        }
        const Result bad = runProgram({broken});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("\"axes\" is not an array")), qPrintable(bad.err));
    }

    void startsASweepFromThePanel()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
        QCOMPARE(
            w.applySettings(windowSettings({{"engine", "sim"}, {"cluster", "ideal"}, {"workers", "4"}})), QString());
        SweepDialog* dialog = w.studies().showSweep();
        QVERIFY(dialog && dialog->isVisible());
        const QStringList args = dialog->arguments();
        // Workers 1 to the panel's 4, doubling, for both columns' modes; the panel's engine and cluster.
        QVERIFY2(args.join(QLatin1Char(' ')).contains(QStringLiteral("--sweep workers=1..4 --sweep mode=sync,async")),
            qPrintable(args.join(QLatin1Char(' '))));
        QVERIFY(args.contains(QStringLiteral("--engine")) && args.contains(QStringLiteral("ideal")));
        QVERIFY(!args.contains(QStringLiteral("--workers")));
        const QString folder = m_dir.filePath(QStringLiteral("sweep"));
        dialog->setFolder(folder);
        dialog->setSteps(60);
        dialog->setJobs(2);
        screenshot(dialog, QStringLiteral("sweep-dialog"));
        dialog->start();
        QTRY_VERIFY_WITH_TIMEOUT(dialog->process()->settled() >= 1, 120000);
        QCOMPARE(dialog->process()->total(), 6);
        screenshot(dialog, QStringLiteral("sweep-progress"));
        // When it ends, its window opens.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.studies().studyView() && w.studies().studyView()->study().dir == QDir(folder).absolutePath(), 180000);
        QCOMPARE(w.studies().studyView()->study().status, QStringLiteral("complete"));
        QCOMPARE(w.studies().studyView()->study().finished, 6);
    }

    void aSweepCanBeCancelledAndResumed()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        MainWindow w;
        w.controller()->setProgram(QStringLiteral(SGDSCOPE_BINARY));
        QCOMPARE(w.applySettings(windowSettings({{"engine", "sim"}, {"cluster", "datacenter"}, {"workers", "8"}})),
            QString());
        SweepDialog* dialog = w.studies().showSweep();
        const QString folder = m_dir.filePath(QStringLiteral("cancelled"));
        dialog->setFolder(folder);
        dialog->setSteps(1500);
        dialog->setJobs(1);
        dialog->start();
        QTRY_VERIFY_WITH_TIMEOUT(dialog->process()->settled() >= 1, 120000);
        dialog->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->process()->running(), 60000);
        QVERIFY2(dialog->problem().startsWith(QStringLiteral("Cancelled")), qPrintable(dialog->problem()));
        QVERIFY(!w.studies().studyView()); // its window opens when it ends, not when it is cancelled
        const Json stopped = readJson(QDir(folder).filePath(QStringLiteral("study.json")));
        QCOMPARE(stopped.at("status").get<std::string>(), std::string("interrupted"));
        const int kept = stopped.at("points_finished").get<int>();
        QVERIFY(kept >= 1);
        dialog->resume();
        QTRY_VERIFY_WITH_TIMEOUT(w.studies().studyView(), 240000);
        const Json done = readJson(QDir(folder).filePath(QStringLiteral("study.json")));
        QCOMPARE(done.at("status").get<std::string>(), std::string("complete"));
        QCOMPARE(done.at("timing").at("points_reused").get<int>(), kept);
    }

private:
    QTemporaryDir m_dir;
    QString m_study;
};

QTEST_MAIN(TestWindowStudy)
#include "test_window_study.moc"
