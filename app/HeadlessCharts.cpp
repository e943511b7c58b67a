#include "app/HeadlessCharts.h"

#include "core/common/Error.h"
#include "ui/charts/RunCharts.h"

#include <QApplication>
#include <QString>
#include <QStringList>

namespace sgdscope {

namespace {
/// The recorded run in the window's own terms.
void fill(ui::ModeSeries& series, const HeadlessModeRun& run)
{
    ui::MetricsBatch batch;
    const int m = run.result.mode == Mode::Sync ? ui::SyncMode : ui::AsyncMode;
    auto& points = batch.points[static_cast<std::size_t>(m)];
    for (const auto& p : run.recorder.updates()) {
        if (std::isfinite(p.batchLoss))
            points.push_back({p.index, p.samples, p.seconds, p.batchLoss, p.staleness});
    }
    for (const auto& e : run.recorder.evaluations())
        batch.evals[static_cast<std::size_t>(m)].push_back(
            {e.index, e.samples, e.seconds, e.trainLoss, e.trainAccuracy});
    ui::ModeStatus& status = batch.status[static_cast<std::size_t>(m)];
    status.valid = true;
    status.updates = run.result.updates;
    status.samples = run.result.samples;
    status.seconds = run.result.seconds;
    status.diverged = run.result.diverged;
    status.divergedAt = run.result.divergedAt;
    status.finished = true;
    for (const WorkerTotals& w : run.result.workers)
        status.workers.push_back({w.busySeconds, w.idleSeconds, w.applySeconds, w.updates});
    status.stalenessCounts = run.result.staleness.counts();
    status.meanStaleness = run.result.staleness.mean();
    status.maxStaleness = run.result.staleness.max();
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
