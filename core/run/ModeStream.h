#pragma once

#include "core/metrics/TrainingObserver.h"
#include "core/run/Experiment.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace sgdscope {

// The bytes between a simulated mode's own process and its parent (ModeChild.h): the request the parent writes on
// the child's standard input, and the mode's event stream and result the child writes back on its standard output.
// Both ends are the same binary (the child is this executable), so plain records are written as their bytes. A
// record is a tag byte and its fields; strings and arrays carry their length first. This file knows the format
// only; starting, watching and ending the process is ModeChild.cpp's.

/// Writes records to a file descriptor, one whole record at a time (flush), so that the reader never waits for half
/// of one. Throws SgdError if the descriptor no longer takes them.
class ModeStreamWriter
{
public:
    explicit ModeStreamWriter(int fd)
        : m_fd(fd)
    {
    }
    template<typename T>
    void put(const T& value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        bytes(&value, sizeof value);
    }
    void put(const std::string& text);
    template<typename T>
    void putArray(const T* values, std::size_t count)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        put(static_cast<std::uint64_t>(count));
        bytes(values, count * sizeof(T));
    }
    /// Writes what was put.
    void flush();

private:
    void bytes(const void* data, std::size_t size);

    int m_fd;
    std::vector<char> m_buffer;
};

/// Reads them back. Throws std::runtime_error ("ended", "garbled") if the stream ends in a record or a length is
/// past its limit.
class ModeStreamReader
{
public:
    /// `waiting` is called about ten times a second while no bytes come (the parent passes signals on there); none:
    /// a plain blocking read.
    ModeStreamReader(int fd, std::function<void()> waiting);
    /// Fills `size` bytes; false if the stream ended first.
    bool bytes(void* data, std::size_t size);
    template<typename T>
    T get()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        T value;
        if (!bytes(&value, sizeof value))
            throw std::runtime_error("ended");
        return value;
    }
    std::string getString(std::uint64_t limit = 1ULL << 30);
    template<typename T, typename Vector>
    void getArray(Vector& out, std::uint64_t limit)
    {
        const auto count = get<std::uint64_t>();
        if (count > limit)
            throw std::runtime_error("garbled");
        out.resize(count);
        if (!bytes(out.data(), count * sizeof(T)))
            throw std::runtime_error("ended");
    }

private:
    bool fill();

    int m_fd;
    std::function<void()> m_waiting;
    char m_buffer[1 << 16];
    std::size_t m_at = 0;
    std::size_t m_end = 0;
};

/// What both sides must have prepared alike (a check that the child's run is the parent's).
struct RunShape
{
    int batch = 0;
    int workers = 0;
    std::int64_t steps = 0;
    std::int64_t sampleBudget = 0;
    std::size_t parameters = 0;
    bool operator==(const RunShape&) const = default;
};
RunShape shapeOf(const PreparedRun& run);

/// The parent's request: the run's configuration, the engine as measured by the parent, the mode, the slices' length
/// of the mode's clock (0: none) and the run's shape.
struct ModeRequest
{
    RunConfig config;
    Mode mode = Mode::Sync;
    double sliceSeconds = 0.0;
    EngineChoice engine;
    RunShape shape;
};
void writeRequest(ModeStreamWriter& out, const PreparedRun& run, Mode mode, double sliceSeconds);
/// Throws SgdError if the input is not a mode's request or its configuration is refused.
ModeRequest readRequest(ModeStreamReader& in);

/// The child's observer: every event, as it happens, to the parent.
class StreamingObserver : public TrainingObserver
{
public:
    explicit StreamingObserver(ModeStreamWriter& out)
        : m_out(out)
    {
    }
    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override;
    void onUpdate(const UpdateEvent& update, const UpdateFigures& figures) override;
    void onEvaluation(const EvaluationRecord& evaluation) override;
    bool stopRequested() override;

private:
    ModeStreamWriter& m_out;
};
/// The child's other records: where the mode stands after a slice, its result (the stream ends), or why it refused
/// the request (the stream ends).
void writeStanding(ModeStreamWriter& out, const ModeProgress& progress);
void writeResult(ModeStreamWriter& out, const ModeResult& result);
void writeRefusal(ModeStreamWriter& out, const std::string& why);

/// An update that is in the figures but whose report to the observer threw (out of memory): the caller reports it
/// once more after the failure has unwound, so that the figures and the recorded rows agree.
struct UnreportedUpdate
{
    bool pending = false;
    UpdateEvent update;
    UpdateFigures figures;
};
/// Reports a pending update to `observer` once more; false if that ran out of memory too (it stays pending).
bool reportAgain(UnreportedUpdate& unreported, TrainingObserver& observer);

/// The parent's end: reads the child's records until its result, reporting each event to `metrics` and `observer`
/// as it comes and each slice's standing to `afterSlice` (if set), and takes the result's values into `result`
/// (`parameters`: how many it may hold). Returns the child's reason if it refused the request instead. Throws
/// std::runtime_error if the stream ends or makes no sense before either, and std::bad_alloc if recording runs out
/// of memory: what came is in `metrics`, `result`'s updates, samples and seconds are the last counted update's (with
/// its divergence), `result.final` is the last evaluation that came (index -1 if none), and an update counted but
/// not reported is in `unreported`.
std::optional<std::string> readModeStream(ModeStreamReader& in, RunMetrics& metrics, TrainingObserver& observer,
    const std::function<void(const ModeStanding&)>& afterSlice, ModeResult& result, std::size_t parameters,
    UnreportedUpdate& unreported);

} // namespace sgdscope
