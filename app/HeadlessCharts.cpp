#include "app/HeadlessCharts.h"

#include "core/common/Error.h"
#include "ui/PointConversion.h"
#include "ui/charts/RunCharts.h"

#include <QApplication>
#include <QString>
#include <QStringList>

namespace sgdscope {

namespace {
/// The recorded run in the window's own terms (ui/PointConversion.h: the same conversion as the window's).
void fill(ui::ModeSeries& series, const HeadlessModeRun& run)
{
    ui::MetricsBatch batch;
    const int m = run.result.mode == Mode::Sync ? ui::SyncMode : ui::AsyncMode;
    for (const auto& p : run.recorder.updates())
        batch.points[static_cast<std::size_t>(m)].push_back(ui::lossPoint(p));
    for (const auto& e : run.recorder.evaluations())
        batch.evals[static_cast<std::size_t>(m)].push_back(ui::evalPoint(e));
    const ModeResult& r = run.result;
    ui::ModeProgress progress;
    progress.updates = r.updates;
    progress.samples = r.samples;
    progress.seconds = r.seconds;
    progress.diverged = r.diverged;
    progress.divergedAt = r.divergedAt;
    progress.finished = true;
    progress.target = r.target;
    progress.targetAccuracy = r.settings.targetAccuracy;
    progress.targetLoss = r.settings.targetLoss;
    progress.virtualClock = r.engineChoice.kind == EngineKind::Sim;
    batch.status[static_cast<std::size_t>(m)] = ui::modeStatus(r.metrics, progress);
    series.add(batch, m);
}
} // namespace

ChartWriter headlessChartWriter()
{
    return [](const std::string& folder, const std::vector<const HeadlessModeRun*>& runs) {
        static int argc = 1;
        static char name[] = "sgdscope";
        static char* argv[] = {name, nullptr};
        static QApplication* app = QApplication::instance() ? nullptr : new QApplication(argc, argv);
        (void)app;
        ui::ModeSeries sync, async;
        for (const HeadlessModeRun* r : runs)
            fill(r->result.mode == Mode::Sync ? sync : async, *r);
        const QStringList problems = ui::writeRunCharts(QString::fromStdString(folder), sync, async);
        if (!problems.isEmpty())
            throw SgdError(problems.join(QStringLiteral("; ")).toStdString());
    };
}

} // namespace sgdscope
