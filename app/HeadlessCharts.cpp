#include "app/HeadlessCharts.h"

#include "core/common/Error.h"
#include "ui/PointConversion.h"
#include "ui/charts/RunCharts.h"

#include "ui/charts/Exportable.h"

#include <QApplication>
#include <QString>
#include <QStringList>

#include <memory>

namespace sgdscope {

namespace {
/// The recorded run in the window's own terms (ui/PointConversion.h: the same conversion as the window's).
void fill(ui::ModeSeries& series, const HeadlessModeRun& run)
{
    ui::MetricsBatch batch;
    const int m = ui::LeftColumn; // (one series per mode: any slot of the batch does)
    for (const auto& p : run.recorder.updates())
        batch.points[static_cast<std::size_t>(m)].push_back(ui::lossPoint(p));
    for (const auto& e : run.recorder.evaluations())
        batch.evals[static_cast<std::size_t>(m)].push_back(ui::evalPoint(e));
    batch.status[static_cast<std::size_t>(m)] = ui::modeStatus(standingOf(run.result));
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
        std::vector<std::unique_ptr<ui::ModeSeries>> series;
        std::vector<ui::ChartedMode> modes;
        for (const HeadlessModeRun* r : runs) {
            series.push_back(std::make_unique<ui::ModeSeries>());
            fill(*series.back(), *r);
            const QString label = ui::modeTitle(r->result.mode);
            modes.push_back({series.back().get(), label, ui::palette::mode(r->result.mode), isSyncLike(r->result.mode),
                r->result.mode == Mode::Ssp});
        }
        const QStringList problems = ui::writeRunCharts(QString::fromStdString(folder), modes);
        if (!problems.isEmpty())
            throw SgdError(problems.join(QStringLiteral("; ")).toStdString());
    };
}

} // namespace sgdscope
