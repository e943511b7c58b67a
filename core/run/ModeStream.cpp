#include "core/run/ModeStream.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/HeadlessRun.h"
#include "core/run/Options.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <poll.h>
#include <unistd.h>

namespace sgdscope {

namespace {
constexpr std::uint32_t streamMagic = 0x5347'4d43; // "SGMC"
constexpr std::uint32_t streamVersion = 3; // 2: a standing and a result carry ModeProgress whole; 3: its process_cpu

enum class Tag : std::uint8_t
{
    Window = 'W', // a WorkWindow and its spans
    Update = 'U', // an UpdateEvent
    Evaluation = 'E', // an EvaluationRecord
    Slice = 'S', // where the mode stands after a slice (runMode's afterSlice)
    Result = 'R', // the mode's result; the stream ends
    Refused = 'X', // the child refused the request (an SgdError's message); the stream ends
};

void putEngine(ModeStreamWriter& w, const EngineChoice& e)
{
    w.put(e.kind);
    w.put(e.simHosts);
    w.put(e.sim.cluster);
    w.put(e.sim.platformFile);
    w.put(e.sim.hostFlops);
    w.put(e.sim.placement);
    w.put(e.sim.calibration);
    w.put(e.sim.mpiLink);
}

EngineChoice getEngine(ModeStreamReader& r)
{
    EngineChoice e;
    e.kind = r.get<EngineKind>();
    e.simHosts = r.get<int>();
    e.sim.cluster = r.get<ClusterKind>();
    e.sim.platformFile = r.getString(1 << 16);
    e.sim.hostFlops = r.get<double>();
    e.sim.placement = r.get<Placement>();
    e.sim.calibration = r.get<LocalCalibration>();
    e.sim.mpiLink = r.get<MpiLinkCalibration>();
    return e;
}
} // namespace

void ModeStreamWriter::put(const std::string& text)
{
    put(static_cast<std::uint64_t>(text.size()));
    bytes(text.data(), text.size());
}

void ModeStreamWriter::flush()
{
    std::size_t done = 0;
    while (done < m_buffer.size()) {
        const ssize_t n = ::write(m_fd, m_buffer.data() + done, m_buffer.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw SgdError(std::string("the mode's stream to its parent broke: ") + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    m_buffer.clear();
}

void ModeStreamWriter::bytes(const void* data, std::size_t size)
{
    const auto* p = static_cast<const char*>(data);
    m_buffer.insert(m_buffer.end(), p, p + size);
}

ModeStreamReader::ModeStreamReader(int fd, std::function<void()> waiting)
    : m_fd(fd)
    , m_waiting(std::move(waiting))
{
}

bool ModeStreamReader::bytes(void* data, std::size_t size)
{
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        if (m_at == m_end && !fill())
            return false;
        const std::size_t n = std::min(size, m_end - m_at);
        std::memcpy(p, m_buffer + m_at, n);
        m_at += n;
        p += n;
        size -= n;
    }
    return true;
}

std::string ModeStreamReader::getString(std::uint64_t limit)
{
    const auto size = get<std::uint64_t>();
    if (size > limit)
        throw std::runtime_error("garbled");
    std::string text(size, '\0');
    if (!bytes(text.data(), size))
        throw std::runtime_error("ended");
    return text;
}

bool ModeStreamReader::fill()
{
    for (;;) {
        if (m_waiting) {
            pollfd ready {m_fd, POLLIN, 0};
            const int r = ::poll(&ready, 1, 100);
            if (r == 0 || (r < 0 && errno == EINTR)) {
                m_waiting();
                continue;
            }
        }
        const ssize_t n = ::read(m_fd, m_buffer, sizeof m_buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        m_at = 0;
        m_end = static_cast<std::size_t>(n);
        return true;
    }
}

RunShape shapeOf(const PreparedRun& run)
{
    return {run.settings.batch, run.settings.workers, run.steps, run.settings.sampleBudget,
        run.problem->layout.parameterCount()};
}

void writeRequest(ModeStreamWriter& out, const PreparedRun& run, Mode mode, double sliceSeconds)
{
    out.put(streamMagic);
    out.put(streamVersion);
    out.put(dumpJson(configJson(run.config), -1));
    out.put(mode);
    out.put(sliceSeconds);
    putEngine(out, run.engine);
    out.put(shapeOf(run));
    out.flush();
}

ModeRequest readRequest(ModeStreamReader& in)
{
    const char* notARequest
        = "--mode-child: standard input is not a mode's request (the window and headless runs start this process "
          "themselves)";
    ModeRequest request;
    try {
        if (in.get<std::uint32_t>() != streamMagic || in.get<std::uint32_t>() != streamVersion)
            throw SgdError(notARequest);
        ConfigBuilder builder;
        builder.applyJson(parseJson(in.getString(16U << 20), "the mode's configuration"), "the mode's request");
        request.config = builder.resolve();
        request.mode = in.get<Mode>();
        request.sliceSeconds = in.get<double>();
        request.engine = getEngine(in);
        request.shape = in.get<RunShape>();
    } catch (const SgdError&) {
        throw;
    } catch (const std::runtime_error&) {
        throw SgdError(notARequest);
    }
    return request;
}

void StreamingObserver::onWorkerTime(const WorkWindow& window, std::span<const Span> spans)
{
    m_out.put(Tag::Window);
    m_out.put(window);
    m_out.putArray(spans.data(), spans.size());
    m_out.flush();
}

void StreamingObserver::onUpdate(const UpdateEvent& update, const UpdateFigures&)
{
    m_out.put(Tag::Update);
    m_out.put(update);
    m_out.flush();
}

void StreamingObserver::onEvaluation(const EvaluationRecord& evaluation)
{
    m_out.put(Tag::Evaluation);
    m_out.put(evaluation);
    m_out.flush();
}

bool StreamingObserver::stopRequested()
{
    return interruptSignal() != 0;
}

void writeStanding(ModeStreamWriter& out, const ModeProgress& progress)
{
    out.put(Tag::Slice);
    out.put(progress);
    out.flush();
}

void writeResult(ModeStreamWriter& out, const ModeResult& r)
{
    out.put(Tag::Result);
    out.put(static_cast<const ModeProgress&>(r));
    out.put(r.wallSeconds);
    out.put(r.final);
    out.put(r.finalIsLastEvaluation);
    out.put(r.interrupted);
    out.put(r.onCoreSeconds); // the child's threads while it trained: the mode's process_cpu
    out.put(r.waitedForACoreSeconds);
    out.put(r.paramsDigest);
    out.put(r.kernelPath);
    out.put(r.failure);
    out.putArray(r.parameters.data(), r.parameters.size());
    out.flush();
}

void writeRefusal(ModeStreamWriter& out, const std::string& why)
{
    out.put(Tag::Refused);
    out.put(why);
    out.flush();
}

bool reportAgain(UnreportedUpdate& unreported, TrainingObserver& observer)
{
    if (!unreported.pending)
        return true;
    try {
        observer.onUpdate(unreported.update, unreported.figures);
    } catch (const std::bad_alloc&) {
        return false;
    }
    unreported.pending = false;
    return true;
}

std::optional<std::string> readModeStream(ModeStreamReader& in, RunMetrics& metrics, TrainingObserver& observer,
    const std::function<void(const ModeStanding&)>& afterSlice, ModeResult& result, std::size_t parameters,
    UnreportedUpdate& unreported)
{
    result.final.index = -1; // no evaluation yet
    result.final.samples = -1;
    result.final.trainLoss = std::numeric_limits<double>::quiet_NaN();
    std::vector<Span> spans;
    for (;;) {
        switch (in.get<Tag>()) {
        case Tag::Window: {
            const auto window = in.get<WorkWindow>();
            in.getArray<Span>(spans, 1ULL << 32);
            metrics.addWorkerTime(window, spans);
            observer.onWorkerTime(window, spans);
            break;
        }
        case Tag::Update: {
            const auto update = in.get<UpdateEvent>();
            const UpdateFigures figures = metrics.addUpdate(update);
            // Where the mode stands once the update is counted, for a stream cut short before its result.
            if (update.applied) {
                result.updates = update.index + 1;
                result.samples = update.samplesSeen;
                result.seconds = update.seconds;
            } else {
                result.diverged = true;
                result.divergedAt = update.index;
            }
            unreported = {true, update, figures};
            observer.onUpdate(update, figures);
            unreported.pending = false;
            break;
        }
        case Tag::Evaluation: {
            // The last one, and the target it reached, for a stream cut short before its result.
            const auto evaluation = in.get<EvaluationRecord>();
            result.final = evaluation;
            if (!result.target.reached && meetsTarget(evaluation, result.targetAccuracy, result.targetLoss))
                result.target = TargetReached {true, evaluation.seconds, evaluation.samples, evaluation.index};
            observer.onEvaluation(evaluation);
            break;
        }
        case Tag::Slice: {
            const ModeStanding standing {in.get<ModeProgress>(), &metrics};
            if (afterSlice)
                afterSlice(standing);
            break;
        }
        case Tag::Result:
            static_cast<ModeProgress&>(result) = in.get<ModeProgress>();
            result.wallSeconds = in.get<double>();
            result.final = in.get<EvaluationRecord>();
            result.finalIsLastEvaluation = in.get<bool>();
            result.interrupted = in.get<bool>();
            result.onCoreSeconds = in.get<double>();
            result.waitedForACoreSeconds = in.get<double>();
            result.paramsDigest = in.getString(1024);
            result.kernelPath = in.getString(1024);
            result.failure = in.getString(1 << 20);
            in.getArray<float>(result.parameters, parameters);
            return std::nullopt;
        case Tag::Refused:
            return in.getString(1 << 20);
        default:
            throw std::runtime_error("garbled");
        }
    }
}

} // namespace sgdscope
