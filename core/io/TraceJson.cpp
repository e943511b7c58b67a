#include "core/io/TraceJson.h"

#include "core/common/Json.h"

#include <algorithm>
#include <cmath>

namespace sgdscope {

std::string traceJson(
    const std::vector<std::pair<Mode, const RunRecorder*>>& runs, const std::string& clockNote, bool mpiRanks)
{
    // Trace-event format: complete events ("ph": "X") with microsecond timestamps; one process per mode,
    // one thread (row) per worker. Each mode's clock starts at 0. A wait that names whom it waited for carries
    // it in its args ("waited_for": "worker 3").
    std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    bool first = true;
    auto event = [&](int pid, int tid, const char* name, const char* cat, double start, double end, int culprit) {
        if (end <= start)
            return;
        out += first ? "" : ",\n";
        first = false;
        out += "{\"name\": \"" + std::string(name) + "\", \"cat\": \"" + cat
            + "\", \"ph\": \"X\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid)
            + ", \"ts\": " + formatNumber(std::round(start * 1e9) / 1e3)
            + ", \"dur\": " + formatNumber(std::round((end - start) * 1e9) / 1e3)
            + (culprit >= 0 ? ", \"args\": {\"waited_for\": \"worker " + std::to_string(culprit) + "\"}" : "") + "}";
    };
    auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
        out += first ? "" : ",\n";
        first = false;
        out += "{\"name\": \"" + std::string(what) + "\", \"ph\": \"M\", \"pid\": " + std::to_string(pid)
            + ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"name\": ";
        out += Json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += "}}";
    };
    int pid = 0;
    for (const auto& [mode, recorder] : runs) {
        ++pid; // one process per mode, in the order they ran
        meta(pid, 0, "process_name",
            std::string(modeName(mode)) + (clockNote.empty() ? "" : " (" + clockNote + ")")
                + (recorder->spansTruncated() ? " (first spans only)" : ""));
        int workers = 0;
        for (const auto& s : recorder->spans())
            workers = std::max(workers, s.worker + 1);
        for (int w = 0; w < workers; ++w)
            meta(pid, w, "thread_name",
                "worker " + std::to_string(w)
                    + (mpiRanks ? " (rank " + std::to_string(isSyncLike(mode) ? w : w + 1) + ")" : ""));
        // One event per span: consecutive spans of a worker never overlap (each is measured by the worker
        // itself, in time order).
        for (const auto& s : recorder->spans()) {
            const char* category = isWait(s.kind) ? "idle" : isBusy(s.kind) ? "busy" : "work";
            event(pid, s.worker, nameOf(spanKindNames, s.kind).c_str(), category, s.start, s.end, s.culprit);
        }
    }
    out += "\n]}\n";
    return out;
}

} // namespace sgdscope
