#include "core/io/MetricsCsv.h"

#include "core/io/Json.h"

#include <cmath>

namespace sgdscope {

std::string metricsCsv(const std::vector<std::pair<Mode, const RunRecorder*>>& runs)
{
    std::string out = "mode,kind,update,samples,seconds,batch_loss,staleness,worker,train_loss,train_accuracy\n";
    auto num = [](double v) {
        return std::isfinite(v) ? formatNumber(v) : (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
    };
    for (const auto& [mode, recorder] : runs) {
        const std::string m = modeName(mode);
        for (const auto& p : recorder->updates()) {
            out += m + ",update," + std::to_string(p.index) + "," + std::to_string(p.samples) + "," + num(p.seconds)
                + "," + num(p.batchLoss) + "," + std::to_string(p.staleness) + ","
                + (p.worker >= 0 ? std::to_string(p.worker) : "") + ",,\n";
        }
        for (const auto& e : recorder->evaluations()) {
            out += m + ",eval," + std::to_string(e.index) + "," + std::to_string(e.samples) + "," + num(e.seconds)
                + ",,,," + num(e.trainLoss) + "," + (e.trainAccuracy >= 0 ? num(e.trainAccuracy) : "") + "\n";
        }
    }
    return out;
}

} // namespace sgdscope
