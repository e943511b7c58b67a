// The window's own cost, as JSON: redraw time per tick with 10^6 recorded updates per mode, event-loop
// latency while both modes train at full speed (2 threads on parabola and fashion-mnist, and 1,024 simulated
// workers on the datacenter cluster, both columns live: every worker's bar, the staleness histogram's widening
// bins; target p99 under 16 ms), and resident memory after a run of 10^7 updates.
// Runs on Qt's offscreen platform (no display needed). The simulated run is the window's child process: the
// sgdscope binary beside this one (build/app/sgdscope), or --program PATH.
//   bench_gui [--latency-seconds S] [--long-updates N] [--only redraw|latency|memory] [--program PATH]
#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/WindowOptions.h"
#include "ui/charts/Exportable.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <sys/resource.h>

using namespace sgdscope::ui;

namespace {

double residentMegabytes()
{
    QFile f(QStringLiteral("/proc/self/status"));
    f.open(QIODevice::ReadOnly);
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return static_cast<double>(line.mid(6).trimmed().split(' ').front().toLongLong()) / 1024.0;
    }
    return -1;
}

QJsonObject stats(std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    QJsonObject o;
    if (ms.empty())
        return o;
    o[QStringLiteral("median_ms")] = std::round(ms[ms.size() / 2] * 1000) / 1000;
    o[QStringLiteral("p99_ms")]
        = std::round(ms[std::min(ms.size() - 1, static_cast<std::size_t>(ms.size() * 0.99))] * 1000) / 1000;
    o[QStringLiteral("max_ms")] = std::round(ms.back() * 1000) / 1000;
    o[QStringLiteral("samples")] = static_cast<int>(ms.size());
    return o;
}

/// 10^6 updates per mode, fed in ticks as the controller would, with 8 workers' statuses and timelines.
void feedSynthetic(MainWindow& window, std::int64_t updates)
{
    std::mt19937 rng(1);
    std::normal_distribution<double> noise(0.0, 0.3);
    const std::int64_t perBatch = 20000;
    for (std::int64_t done = 0; done < updates; done += perBatch) {
        MetricsBatch batch;
        for (int m = 0; m < modeCount; ++m) {
            auto& pts = batch.points[static_cast<std::size_t>(m)];
            for (std::int64_t i = done; i < std::min(updates, done + perBatch); ++i) {
                const double loss = 2.0 / (1.0 + 1e-4 * static_cast<double>(i)) * std::exp(noise(rng));
                pts.push_back({i, 256 * (i + 1), 1e-3 * static_cast<double>(i), loss,
                    m == RightColumn ? static_cast<std::int64_t>(i % 9) : 0});
            }
            ModeStatus& s = batch.status[static_cast<std::size_t>(m)];
            s.valid = true;
            s.updates = done + perBatch;
            s.workers.assign(8, WorkerTime {1.6, 1.0, 0.5, 0.1, 0.0, 0.0, done});
            s.stalenessCounts = {10, 20, 30, 40, 30, 20, 10, 5, 2, 1};
            for (int w = 0; w < 8; ++w) {
                for (int b = 0; b < 40; ++b) {
                    TimeBin t;
                    t.worker = w;
                    t.bin = static_cast<std::int64_t>(done) / 20 + b;
                    t.seconds = {0.0006f, 0.0001f, 0.0002f, 0.0001f, 0.0f};
                    batch.timeline[static_cast<std::size_t>(m)].push_back(t);
                }
            }
            if (done % 100000 == 0)
                batch.evals[static_cast<std::size_t>(m)].push_back({done, 256 * done, 1e-3 * static_cast<double>(done),
                    1.0 / (1 + 1e-4 * static_cast<double>(done)), 0.8});
        }
        window.acceptMetrics(batch);
    }
}

/// Shows a full-HD window and starts a preset with its own batch and learning rate, no straggler.
void startPreset(MainWindow& window, const QString& preset, int workers)
{
    window.resize(1920, 1080);
    window.show();
    SessionSettings s = window.panel()->settings();
    s.preset = preset;
    s.workers = workers;
    s.batch = 0;
    s.learningRate = 0;
    s.slowWorker = -1;
    window.panel()->setSettings(s);
    window.controller()->setSettings(window.panel()->settings());
    window.controller()->start();
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    double latencySeconds = 10;
    std::int64_t longUpdates = 10'000'000;
    QString only;
    QString program;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--latency-seconds"))
            latencySeconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--long-updates"))
            longUpdates = std::atoll(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--only"))
            only = QString::fromLatin1(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--program"))
            program = QString::fromLocal8Bit(argv[i + 1]);
    }
    auto wanted = [&](const char* part) { return only.isEmpty() || only == QLatin1String(part); };
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("sgdscope-bench"));
    if (program.isEmpty())
        program = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("../app/sgdscope"));
    QJsonObject out;
    out[QStringLiteral("benchmark")] = QStringLiteral("window cost (offscreen)");

    // 1. Redraw time per tick with 10^6 recorded updates per mode.
    if (wanted("redraw")) {
        MainWindow window;
        window.resize(1920, 1080);
        window.show();
        QApplication::processEvents();
        feedSynthetic(window, 1'000'000);
        QApplication::processEvents();
        std::vector<double> total, lossCharts, comparison;
        for (int tick = 0; tick < 40; ++tick) {
            QElapsedTimer t;
            t.start();
            window.column(LeftColumn)->lossChart()->refresh();
            window.column(RightColumn)->lossChart()->refresh();
            lossCharts.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
            t.restart();
            window.comparison(0)->refresh();
            window.comparison(1)->refresh();
            comparison.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
            t.restart();
            window.refreshCharts();
            window.repaint();
            QApplication::processEvents();
            total.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
        }
        // Paint cost of each chart on its own (render into an image at 1x).
        QJsonObject paint;
        for (const Exportable* e : window.exportables()) {
            std::vector<double> ms;
            for (int i = 0; i < 10; ++i) {
                QElapsedTimer t;
                t.start();
                const QImage image = e->renderImage(1.0);
                ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
            }
            std::sort(ms.begin(), ms.end());
            paint[e->exportName()] = std::round(ms[ms.size() / 2] * 100) / 100;
        }
        QJsonObject r;
        r[QStringLiteral("paint_ms_per_chart")] = paint;
        r[QStringLiteral("recorded_updates_per_mode")] = 1000000;
        r[QStringLiteral("kept_points_per_mode")] = static_cast<int>(window.series(LeftColumn).points().size());
        r[QStringLiteral("whole_tick_refresh_and_paint")] = stats(total);
        r[QStringLiteral("two_loss_charts_refresh")] = stats(lossCharts);
        r[QStringLiteral("two_comparison_charts_refresh")] = stats(comparison);
        out[QStringLiteral("redraw")] = r;
    }

    // 2. Event-loop latency while both modes train at full speed: 2 threads on two presets, then 1,024 simulated
    // workers (fashion-mnist, 4 samples each: the window draws 1,024 workers' figures every tick).
    struct LatencyCase
    {
        QString preset;
        int workers;
        QString engine;
        int batch; // 0: the preset's
    };
    QJsonArray latencies;
    for (const LatencyCase& c : {LatencyCase {QStringLiteral("parabola"), 2, QStringLiteral("threads"), 0},
             LatencyCase {QStringLiteral("fashion-mnist"), 2, QStringLiteral("threads"), 0},
             LatencyCase {QStringLiteral("fashion-mnist"), 1024, QStringLiteral("sim"), 4096}}) {
        if (!wanted("latency"))
            break;
        MainWindow window;
        if (c.engine == QLatin1String("threads")) {
            startPreset(window, c.preset, c.workers);
        } else {
            window.resize(1920, 1080);
            window.show();
            window.controller()->setProgram(program);
            const QString refused = window.applySettings(windowSettings({{"engine", c.engine.toStdString()},
                {"cluster", "datacenter"}, {"preset", c.preset.toStdString()}, {"workers", std::to_string(c.workers)},
                {"batch", std::to_string(c.batch)}, {"mode", "sync,async"}}));
            if (!refused.isEmpty()) {
                std::fprintf(stderr, "bench_gui: %s\n", qPrintable(refused));
                return 1;
            }
            window.controller()->start();
        }
        QElapsedTimer wait;
        wait.start();
        // Until both columns show their workers (a simulated run's child has loaded the data and sent them).
        auto live = [&] {
            return window.controller()->state() != Controller::State::Loading
                && window.series(LeftColumn).status().workers.size() == static_cast<std::size_t>(c.workers)
                && window.series(RightColumn).status().workers.size() == static_cast<std::size_t>(c.workers);
        };
        while (!live() && wait.elapsed() < 120000)
            QApplication::processEvents(QEventLoop::AllEvents, 20);
        if (!live()) {
            std::fprintf(stderr, "bench_gui: %s on %d %s workers did not start: %s\n", qPrintable(c.preset), c.workers,
                qPrintable(c.engine), qPrintable(window.lastError()));
            return 1;
        }
        std::vector<double> late;
        QElapsedTimer clock;
        clock.start();
        qint64 expected = 0;
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(5);
        QObject::connect(&probe, &QTimer::timeout, [&] {
            const qint64 now = clock.nsecsElapsed();
            if (expected > 0 && now - expected > 15'000'000 && qEnvironmentVariableIsSet("SGDSCOPE_PROFILE_GUI"))
                qWarning("probe late by %.1f ms", static_cast<double>(now - expected) / 1e6);
            if (expected > 0)
                late.push_back(std::max<double>(0.0, static_cast<double>(now - expected) / 1e6));
            expected = now + 5'000'000;
        });
        probe.start();
        QTimer::singleShot(static_cast<int>(latencySeconds * 1000), &app, [&] { QApplication::exit(0); });
        rusage r0 {};
        ::getrusage(RUSAGE_THREAD, &r0);
        QApplication::exec();
        rusage r1 {};
        ::getrusage(RUSAGE_THREAD, &r1);
        probe.stop();
        const double guiCpu
            = static_cast<double>(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec)
            + static_cast<double>(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec)
                / 1e6;
        const long involuntary = r1.ru_nivcsw - r0.ru_nivcsw;
        QJsonObject r = stats(late);
        r[QStringLiteral("preset")] = c.preset;
        r[QStringLiteral("engine")] = c.engine;
        r[QStringLiteral("workers")] = c.workers;
        r[QStringLiteral("sync_updates")] = static_cast<double>(window.series(LeftColumn).status().updates);
        r[QStringLiteral("async_pushes")] = static_cast<double>(window.series(RightColumn).status().updates);
        r[QStringLiteral("async_mean_staleness")]
            = std::round(window.series(RightColumn).status().meanStaleness * 10) / 10;
        const QStringList bins = window.column(RightColumn)->histogram()->labels();
        r[QStringLiteral("staleness_bins")] = bins.isEmpty()
            ? QString()
            : QStringLiteral("%1 bars: %2 .. %3").arg(bins.size()).arg(bins.front(), bins.back());
        r[QStringLiteral("seconds")] = latencySeconds;
        r[QStringLiteral("gui_thread_cpu_seconds")] = std::round(guiCpu * 100) / 100;
        r[QStringLiteral("gui_thread_preempted")] = static_cast<double>(involuntary);
        latencies.append(r);
        window.controller()->reset();
        window.controller()->waitForThreads();
    }
    if (wanted("latency"))
        out[QStringLiteral("event_loop_latency_while_training")] = latencies;

    // 3. Resident memory after a run of 10^7 sync updates (parabola, both modes training). Run it alone
    // (--only memory): memory freed by the other parts stays in the process's heap.
    if (wanted("memory")) {
        MainWindow window;
        startPreset(window, QStringLiteral("parabola"), 1);
        QElapsedTimer t;
        t.start();
        while (window.series(LeftColumn).status().updates < longUpdates && t.elapsed() < 600000)
            QApplication::processEvents(QEventLoop::AllEvents, 50);
        QJsonObject r;
        r[QStringLiteral("sync_updates")] = static_cast<double>(window.series(LeftColumn).status().updates);
        r[QStringLiteral("async_pushes")] = static_cast<double>(window.series(RightColumn).status().updates);
        r[QStringLiteral("kept_points_per_mode")] = static_cast<int>(window.series(LeftColumn).points().size());
        r[QStringLiteral("wall_seconds")] = static_cast<double>(t.elapsed()) / 1000.0;
        r[QStringLiteral("resident_mb")] = std::round(residentMegabytes() * 10) / 10;
        out[QStringLiteral("memory_after_long_run")] = r;
        window.controller()->reset();
        window.controller()->waitForThreads();
    }
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Indented).constData());
    return 0;
}
