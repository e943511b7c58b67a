#include "core/io/MetricsCsv.h"

#include "core/common/Json.h"

#include <cmath>

namespace sgdscope {

std::string metricsCsv(const std::vector<std::pair<Mode, const RunRecorder*>>& runs, bool virtualClock,
    const std::vector<const RunMetrics*>& workers)
{
    // One row per kept update (or push) and per whole-set evaluation. seconds is the mode's own clock;
    // wait_seconds (sync) is the longest wait of a worker in that update; learning_rate the rate it applied.
    std::string out = std::string("mode,kind,update,samples,") + (virtualClock ? "virtual_seconds" : "seconds")
        + ",batch_loss,staleness," + (virtualClock ? "virtual_wait_seconds" : "wait_seconds")
        + ",worker,train_loss,train_accuracy,test_loss,test_accuracy,made_others_wait_seconds,learning_rate\n";
    auto num = [](double v) {
        return std::isfinite(v) ? formatNumber(v) : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
    };
    for (std::size_t run = 0; run < runs.size(); ++run) {
        const Mode mode = runs[run].first;
        const RunRecorder* recorder = runs[run].second;
        const std::string m = modeName(mode);
        for (const auto& p : recorder->updates()) {
            out += m + ",update," + std::to_string(p.index) + "," + std::to_string(p.samples) + "," + num(p.seconds)
                + "," + num(p.batchLoss) + "," + std::to_string(p.staleness) + ","
                + (hasUpdateWaits(mode) ? num(p.waitSeconds) : "") + ","
                + (p.worker >= 0 ? std::to_string(p.worker) : "") + ",,,,,,"
                + (p.learningRate > 0 ? num(p.learningRate) : "") + "\n";
        }
        for (const auto& e : recorder->evaluations()) {
            out += m + ",eval," + std::to_string(e.index) + "," + std::to_string(e.samples) + "," + num(e.seconds)
                + ",,,,," + num(e.trainLoss) + "," + (e.trainAccuracy >= 0 ? num(e.trainAccuracy) : "") + ","
                + (e.hasTest ? num(e.testLoss) : "") + "," + (e.testAccuracy >= 0 ? num(e.testAccuracy) : "") + ",,\n";
        }
        // Who made whom wait: per worker, its wall seconds, its own waits and the others' waits named after it.
        if (run < workers.size() && workers[run]) {
            const auto& figures = workers[run]->workers();
            for (std::size_t w = 0; w < figures.size(); ++w)
                out += m + ",worker,,," + num(figures[w].wallSeconds) + ",,," + num(figures[w].idle()) + ","
                    + std::to_string(w) + ",,,,," + num(figures[w].madeOthersWait) + ",\n";
        }
    }
    return out;
}

} // namespace sgdscope
