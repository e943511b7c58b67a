#include "app/SessionChild.h"

#include "ui/ProgressJson.h"
#include "ui/TrainingSession.h"

#include "core/common/Error.h"

#include <cstdio>
#include <string>
#include <thread>

#include <poll.h>
#include <unistd.h>

namespace sgdscope {

namespace {
void writeLine(const ui::MetricsBatch& batch)
{
    const std::string line = dumpJson(ui::metricsBatchJson(batch), -1) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
}

/// Reads what standard input has within `timeoutMs`; false at its end.
bool readInput(std::string& buffer, int timeoutMs)
{
    pollfd p {STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, timeoutMs) <= 0)
        return true;
    char chunk[4096];
    const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
    if (n <= 0)
        return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
}

/// Takes the first complete line out of `buffer`.
bool takeLine(std::string& buffer, std::string& line)
{
    const std::size_t end = buffer.find('\n');
    if (end == std::string::npos)
        return false;
    line = buffer.substr(0, end);
    buffer.erase(0, end + 1);
    return true;
}
} // namespace

int runSessionChild()
{
    std::string buffer;
    std::string line;
    while (!takeLine(buffer, line)) {
        if (!readInput(buffer, 1000))
            return 2;
    }
    ui::SessionSettings settings;
    try {
        settings = ui::sessionSettingsFromJson(parseJson(line, "session settings"));
    } catch (const std::exception& e) {
        ui::MetricsBatch failed;
        failed.error = QString::fromUtf8(e.what());
        writeLine(failed);
        return 2;
    }
    auto shared = std::make_shared<ui::SessionShared>();
    auto cache = std::make_shared<ui::DataCache>();
    std::thread training(ui::runTrainingSession, shared, cache, settings);
    bool failed = false;
    while (!shared->stop.load()) {
        const bool open = readInput(buffer, 33);
        while (takeLine(buffer, line)) {
            try {
                const ui::SessionCommand command = ui::sessionCommandFromJson(parseJson(line, "session command"));
                std::lock_guard lock(shared->mutex);
                if (command.settings)
                    shared->pending = *command.settings;
                if (command.pause)
                    shared->paused = *command.pause;
                if (command.stop)
                    shared->stop = true;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "sgdscope: %s\n", e.what());
            }
            shared->wake.notify_all();
        }
        if (!open)
            shared->stop = true;
        ui::MetricsBatch batch;
        {
            std::lock_guard lock(shared->mutex);
            std::swap(batch, shared->staging);
        }
        if (!batch.empty())
            writeLine(batch);
        if (!batch.error.isEmpty()) {
            failed = true;
            shared->stop = true;
        }
    }
    shared->wake.notify_all();
    training.join();
    ui::MetricsBatch last;
    std::swap(last, shared->staging);
    if (!last.empty())
        writeLine(last);
    return failed ? 1 : 0;
}

} // namespace sgdscope
