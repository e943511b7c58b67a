// Pictures (offscreen): the window's charts export as real pictures at twice their size, leaving no temporary
// files, an unwritable folder fails cleanly naming the path, and a headless run's charts exist and decode.
#include "WindowTestTools.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/charts/Exportable.h"
#include "ui/charts/LossChart.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using namespace sgdscope::testing;
using namespace sgdscope::ui;

namespace {
/// Pixels that differ from the background, and dark ones (text, axes, lines).
struct Ink
{
    double variance = 0;
    int dark = 0;
};

Ink inkOf(const QImage& image)
{
    Ink ink;
    double sum = 0, sum2 = 0;
    const int step = 2;
    int n = 0;
    for (int y = 0; y < image.height(); y += step) {
        for (int x = 0; x < image.width(); x += step) {
            const int g = qGray(image.pixel(x, y));
            sum += g;
            sum2 += static_cast<double>(g) * g;
            ink.dark += g < 100 ? 1 : 0;
            ++n;
        }
    }
    ink.variance = sum2 / n - (sum / n) * (sum / n);
    return ink;
}
} // namespace

class TestWindowExports : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { useOwnSettings("test_window_exports"); }

    void exportWritesRealPictures()
    {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        setParabola(w, 2);
        w.controller()->start();
        QTRY_VERIFY_WITH_TIMEOUT(
            w.series(LeftColumn).points().size() > 100 && w.series(RightColumn).points().size() > 100, 20000);
        w.controller()->pause();
        w.refreshCharts();
        QTemporaryDir dir;
        const QStringList problems = w.exportCharts(dir.path());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        const QList<const Exportable*> charts = w.exportables();
        QCOMPARE(QDir(dir.path()).entryList({QStringLiteral("*.png")}).size(), charts.size() + 1);
        for (const Exportable* e : charts) {
            const QImage image(dir.filePath(e->exportName() + QStringLiteral(".png")));
            QVERIFY2(!image.isNull(), qPrintable(e->exportName()));
            const auto* widget = dynamic_cast<const QWidget*>(e);
            QCOMPARE(image.size(), widget->size() * 2); // twice the device pixel ratio
            const Ink ink = inkOf(image);
            QVERIFY2(ink.variance > 100, qPrintable(e->exportName() + QStringLiteral(" is blank")));
            QVERIFY2(ink.dark > 200, qPrintable(e->exportName() + QStringLiteral(" has no text")));
        }
        const QImage window(dir.filePath(QStringLiteral("window.png")));
        QCOMPARE(window.size(), w.size() * 2);
        QVERIFY(inkOf(window).variance > 100);
        // No temporary files are left.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), charts.size() + 1);
        w.controller()->reset();
    }

    void exportToAnUnwritableFolderFailsCleanly()
    {
        MainWindow w;
        w.resize(1024, 700);
        w.show();
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("not-a-folder")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        QVERIFY(!w.exportCharts(dir.filePath(QStringLiteral("not-a-folder"))).isEmpty());
        QVERIFY(!w.exportCharts(QStringLiteral("/proc/sgdscope-no")).isEmpty());
        const QString error
            = savePng(w.column(LeftColumn)->lossChart()->renderImage(1.0), QStringLiteral("/proc/sgdscope.png"));
        QVERIFY(error.contains(QStringLiteral("/proc/sgdscope.png")));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), qsizetype(1));
    }

    void headlessChartsExistAndDecode()
    {
        SKIP_IF_FORK_UNDER_TSAN();
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(SGDSCOPE_BINARY),
            {QStringLiteral("--headless"), QStringLiteral("--out"), dir.path(), QStringLiteral("--workers"),
                QStringLiteral("2"), QStringLiteral("--slow"), QStringLiteral("1:3")});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        for (const char* name : {"loss.png", "idle.png", "staleness.png", "comparison.png"}) {
            const QImage image(dir.filePath(QLatin1String(name)));
            QVERIFY2(!image.isNull(), name);
            QVERIFY(image.width() > 800);
            QVERIFY2(inkOf(image).variance > 100, name);
        }
    }
};

QTEST_MAIN(TestWindowExports)
#include "test_window_exports.moc"
