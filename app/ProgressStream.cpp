#include "app/ProgressStream.h"

#include "ui/ProgressJson.h"
#include "ui/SliceObserver.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace sgdscope {

namespace {
class StandardOutputProgress : public ProgressReporter
{
public:
    explicit StandardOutputProgress(Mode mode)
        : m_slices(mode == Mode::Sync ? ui::SyncMode : ui::AsyncMode, m_mutex, m_staging, m_never)
    {
        m_staging.ready = true;
    }
    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override
    {
        m_slices.onWorkerTime(window, spans);
    }
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override
    {
        m_slices.onUpdate(update, figures);
    }
    void onEvaluation(const EvaluationRecord& evaluation) override { m_slices.onEvaluation(evaluation); }
    void afterSlice(const Trainer& trainer) override
    {
        m_slices.flush(trainer);
        const auto now = std::chrono::steady_clock::now();
        if (now - m_lastLine < std::chrono::milliseconds(33) && !trainer.finished())
            return;
        m_lastLine = now;
        ui::MetricsBatch batch;
        {
            std::lock_guard lock(m_mutex);
            std::swap(batch, m_staging);
        }
        const std::string line = dumpJson(ui::metricsBatchJson(batch), -1) + "\n";
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fflush(stdout);
    }

private:
    std::mutex m_mutex;
    ui::MetricsBatch m_staging;
    const std::atomic<bool> m_never {false};
    ui::SliceObserver m_slices;
    std::chrono::steady_clock::time_point m_lastLine {};
};
} // namespace

ProgressFactory progressToStandardOutput()
{
    return
        [](Mode mode) -> std::unique_ptr<ProgressReporter> { return std::make_unique<StandardOutputProgress>(mode); };
}

} // namespace sgdscope
