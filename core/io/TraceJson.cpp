#include "core/io/TraceJson.h"

#include "core/io/Json.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

std::string traceJson(const std::vector<std::pair<Mode, const RunRecorder*>>& runs)
{
    // Trace-event format: complete events ("ph": "X") with microsecond timestamps; one process per mode,
    // one thread (row) per worker. Each mode's clock starts at 0.
    std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    bool first = true;
    auto event = [&](int pid, int tid, const char* name, const char* cat, double start, double end) {
        if (end <= start)
            return;
        out += first ? "" : ",\n";
        first = false;
        out += "{\"name\": \"" + std::string(name) + "\", \"cat\": \"" + cat
            + "\", \"ph\": \"X\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid)
            + ", \"ts\": " + formatNumber(std::round(start * 1e9) / 1e3)
            + ", \"dur\": " + formatNumber(std::round((end - start) * 1e9) / 1e3) + "}";
    };
    auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
        out += first ? "" : ",\n";
        first = false;
        out += "{\"name\": \"" + std::string(what) + "\", \"ph\": \"M\", \"pid\": " + std::to_string(pid)
            + ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"name\": ";
        out += Json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += "}}";
    };
    for (const auto& [mode, recorder] : runs) {
        const int pid = mode == Mode::Sync ? 1 : 2;
        meta(pid, 0, "process_name",
            std::string(modeName(mode)) + (recorder->spansTruncated() ? " (first spans only)" : ""));
        int workers = 0;
        for (const auto& s : recorder->spans())
            workers = std::max(workers, s.worker + 1);
        for (int w = 0; w < workers; ++w)
            meta(pid, w, "thread_name", "worker " + std::to_string(w));
        for (const auto& s : recorder->spans()) {
            // Consecutive spans of one worker never overlap: the pieces of one update are in time order and
            // each update starts after the previous one ended.
            event(pid, s.worker, "wait", "idle", s.computeStart - s.idleBefore, s.computeStart);
            event(pid, s.worker, "compute", "busy", s.computeStart, s.computeEnd);
            event(pid, s.worker, "straggler delay", "busy", s.computeEnd, s.readyAt);
            event(pid, s.worker, "wait", "idle", s.readyAt, s.applyStart);
            event(pid, s.worker, mode == Mode::Sync ? "combine+apply" : "apply", "apply", s.applyStart, s.applyEnd);
        }
    }
    out += "\n]}\n";
    return out;
}

} // namespace sgdscope
