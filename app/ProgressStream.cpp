#include "app/ProgressStream.h"

#include "ui/ProgressJson.h"
#include "ui/SliceObserver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace sgdscope {

namespace {
/// Writes the progress lines on a thread of its own: the run never waits for its reader. (mpirun stops
/// forwarding its processes' output when it is ending the job: a run blocked in a write then could not write
/// its summary in the second it has.) Made once and never destroyed, so that no exit waits for it.
class LineWriter
{
public:
    static LineWriter& get()
    {
        static LineWriter* writer = new LineWriter();
        return *writer;
    }
    void write(std::string line)
    {
        if (!m_threaded) {
            std::fwrite(line.data(), 1, line.size(), stdout);
            std::fflush(stdout);
            return;
        }
        {
            std::lock_guard lock(m_mutex);
            // A reader that takes nothing for long (a stalled window): the oldest lines go, not the memory.
            if (m_lines.size() >= maxLines)
                m_lines.pop_front();
            m_lines.push_back(std::move(line));
        }
        m_changed.notify_all();
    }
    /// Waits until every line is written, at most `seconds`; returns whether they were.
    bool drain(double seconds)
    {
        if (!m_threaded)
            return true;
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(
            lock, std::chrono::duration<double>(seconds), [this] { return m_lines.empty() && !m_busy; });
    }

private:
    LineWriter()
    {
        // A process that cannot start a thread any more (out of memory) writes its lines itself.
        try {
            std::thread([this] { loop(); }).detach();
            m_threaded = true;
        } catch (const std::system_error&) {
        }
    }
    void loop()
    {
        std::unique_lock lock(m_mutex);
        while (true) {
            m_changed.wait(lock, [this] { return !m_lines.empty(); });
            std::string line = std::move(m_lines.front());
            m_lines.pop_front();
            m_busy = true;
            lock.unlock();
            std::fwrite(line.data(), 1, line.size(), stdout);
            std::fflush(stdout);
            lock.lock();
            m_busy = false;
            m_changed.notify_all();
        }
    }
    static constexpr std::size_t maxLines = 10000; // about 5 minutes of lines at 30 a second
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<std::string> m_lines;
    bool m_busy = false;
    bool m_threaded = false;
};

class StandardOutputProgress : public ProgressReporter
{
public:
    explicit StandardOutputProgress(int column)
        : m_slices(column, m_mutex, m_staging, m_never)
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
    void afterSlice(const ModeStanding& standing) override
    {
        m_slices.flush(standing);
        const auto now = std::chrono::steady_clock::now();
        if (now - m_lastLine < std::chrono::milliseconds(33) && !standing.finished)
            return;
        m_lastLine = now;
        ui::MetricsBatch batch;
        {
            std::lock_guard lock(m_mutex);
            std::swap(batch, m_staging);
        }
        LineWriter::get().write(dumpJson(ui::metricsBatchJson(batch), -1) + "\n");
    }

private:
    std::mutex m_mutex;
    ui::MetricsBatch m_staging;
    const std::atomic<bool> m_never {false};
    ui::SliceObserver m_slices;
    std::chrono::steady_clock::time_point m_lastLine {};
};
} // namespace

bool drainProgress(double seconds)
{
    return LineWriter::get().drain(seconds);
}

ProgressFactory progressToStandardOutput()
{
    // The run trains its modes in the order of --mode, one reporter each: the n-th streams as the window's
    // column n (the window asks for its columns' modes in order, ExternalRun maps them back).
    return [made = std::make_shared<int>(0)](Mode) -> std::unique_ptr<ProgressReporter> {
        const int column = std::min((*made)++, ui::modeCount - 1);
        return std::make_unique<StandardOutputProgress>(column);
    };
}

} // namespace sgdscope
