#include "core/run/ModeChild.h"

#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/engines/sim/SimCost.h"
#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/HeadlessRun.h"
#include "core/run/Options.h"
#include "core/train/ReductionPlan.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sgdscope {

namespace {

// The stream between the two processes: the same binary on both ends (the child is this executable), so plain
// records are written as their bytes. A record is a tag byte and its fields; strings and arrays carry their
// length first.
constexpr std::uint32_t streamMagic = 0x5347'4d43; // "SGMC"
constexpr std::uint32_t streamVersion = 2; // 2: a standing and a result carry ModeProgress whole

enum class Tag : std::uint8_t
{
    Window = 'W', // a WorkWindow and its spans
    Update = 'U', // an UpdateEvent
    Evaluation = 'E', // an EvaluationRecord
    Slice = 'S', // where the mode stands after a slice (runMode's afterSlice)
    Result = 'R', // the mode's result; the stream ends
    Refused = 'X', // the child refused the request (an SgdError's message); the stream ends
};

/// A ModeResult's plain fields (not its core time: that is the parent's own, of its threads).
struct ResultRecord
{
    ModeProgress progress;
    double wallSeconds = 0.0;
    EvaluationRecord final;
    bool finalIsLastEvaluation = false;
    bool interrupted = false;
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

RunShape shapeOf(const PreparedRun& run)
{
    return {run.settings.batch, run.settings.workers, run.steps, run.settings.sampleBudget,
        run.problem->layout.parameterCount()};
}

class Writer
{
public:
    explicit Writer(int fd)
        : m_fd(fd)
    {
    }
    template<typename T>
    void put(const T& value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        bytes(&value, sizeof value);
    }
    void put(const std::string& text)
    {
        put(static_cast<std::uint64_t>(text.size()));
        bytes(text.data(), text.size());
    }
    template<typename T>
    void putArray(const T* values, std::size_t count)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        put(static_cast<std::uint64_t>(count));
        bytes(values, count * sizeof(T));
    }
    /// Writes what was put (one record at a time, so that the reader never waits for half of one).
    void flush()
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

private:
    void bytes(const void* data, std::size_t size)
    {
        const auto* p = static_cast<const char*>(data);
        m_buffer.insert(m_buffer.end(), p, p + size);
    }
    int m_fd;
    std::vector<char> m_buffer;
};

class Reader
{
public:
    /// `waiting` is called about ten times a second while no bytes come (the parent passes signals on there).
    Reader(int fd, std::function<void()> waiting)
        : m_fd(fd)
        , m_waiting(std::move(waiting))
    {
    }
    /// Fills `size` bytes; false if the stream ended first.
    bool bytes(void* data, std::size_t size)
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
    template<typename T>
    T get()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        T value;
        if (!bytes(&value, sizeof value))
            throw std::runtime_error("ended");
        return value;
    }
    std::string getString(std::uint64_t limit = 1ULL << 30)
    {
        const auto size = get<std::uint64_t>();
        if (size > limit)
            throw std::runtime_error("garbled");
        std::string text(size, '\0');
        if (!bytes(text.data(), size))
            throw std::runtime_error("ended");
        return text;
    }
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
    bool fill()
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
    int m_fd;
    std::function<void()> m_waiting;
    char m_buffer[1 << 16];
    std::size_t m_at = 0;
    std::size_t m_end = 0;
};

/// The child's observer: every event, as it happens, to the parent.
class StreamingObserver : public TrainingObserver
{
public:
    explicit StreamingObserver(Writer& out)
        : m_out(out)
    {
    }
    void onWorkerTime(const WorkWindow& window, std::span<const Span> spans) override
    {
        m_out.put(Tag::Window);
        m_out.put(window);
        m_out.putArray(spans.data(), spans.size());
        m_out.flush();
    }
    void onUpdate(const UpdateEvent& update, const UpdateFigures&) override
    {
        m_out.put(Tag::Update);
        m_out.put(update);
        m_out.flush();
    }
    void onEvaluation(const EvaluationRecord& evaluation) override
    {
        m_out.put(Tag::Evaluation);
        m_out.put(evaluation);
        m_out.flush();
    }
    bool stopRequested() override { return interruptSignal() != 0; }

private:
    Writer& m_out;
};

std::string g_program;

std::string childProgram()
{
    if (!g_program.empty())
        return g_program;
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        throw SgdError("cannot find this program to run a simulated mode in a process of its own");
    return std::string(path, static_cast<std::size_t>(n));
}

void putEngine(Writer& w, const EngineChoice& e)
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

EngineChoice getEngine(Reader& r)
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

std::string exitText(int status)
{
    if (WIFEXITED(status))
        return "exit code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("signal ") + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
    return "status " + std::to_string(status);
}

} // namespace

void setModeChildProgram(const std::string& path)
{
    g_program = path;
}

ModeResult runModeInChild(const PreparedRun& run, Mode mode, TrainingObserver& observer, double sliceSeconds,
    const std::function<void(const ModeStanding&)>& afterSlice)
{
    // Everything the child needs is made before the fork: between fork and exec only async-signal-safe calls.
    std::string program = childProgram();
    std::string flag = "--mode-child";
    std::vector<char*> argv {program.data(), flag.data(), nullptr};
    int toChild[2];
    int fromChild[2];
    if (::pipe2(toChild, O_CLOEXEC) != 0)
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    if (::pipe2(fromChild, O_CLOEXEC) != 0) {
        ::close(toChild[0]);
        ::close(toChild[1]);
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        for (const int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1]})
            ::close(fd);
        throw SgdError(std::string("cannot start the simulated mode's process: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM); // it ends with its parent
        ::dup2(toChild[0], 0);
        ::dup2(fromChild[1], 1);
        ::execve(argv.front(), argv.data(), environ);
        static const char failed[] = "sgdscope: cannot run the simulated mode's process\n";
        [[maybe_unused]] const ssize_t written = ::write(2, failed, sizeof failed - 1);
        ::_exit(127);
    }
    ::close(toChild[0]);
    ::close(fromChild[1]);

    // The request: the run's configuration, the engine as measured here, the mode and the run's shape.
    int sent = 0;
    auto endChild = [&](bool kill) {
        if (toChild[1] >= 0)
            ::close(toChild[1]);
        toChild[1] = -1;
        if (kill)
            ::kill(pid, SIGKILL);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
        ::close(fromChild[0]);
        return status;
    };
    {
        // A child that dies before reading its request must not end this process with SIGPIPE.
        struct sigaction ignore
        {
        };
        struct sigaction before
        {
        };
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &before);
        try {
            Writer w(toChild[1]);
            w.put(streamMagic);
            w.put(streamVersion);
            w.put(dumpJson(configJson(run.config), -1));
            w.put(mode);
            w.put(sliceSeconds);
            putEngine(w, run.engine);
            w.put(shapeOf(run));
            w.flush();
        } catch (const SgdError&) {
            // Its reason comes from the child's end below.
        }
        ::sigaction(SIGPIPE, &before, nullptr);
    }

    RunMetrics metrics(mode);
    ModeResult result;
    result.mode = mode;
    result.engine = "sim";
    result.engineChoice = run.engine;
    result.simCost.emplace(run.problem->spec, run.problem->layout);
    result.settings = run.settings;
    result.settings.chunk = chunkSizeFor(run.settings.chunk, run.settings.batch);
    // Until its result comes: a simulated mode with nothing done (what a child that dies first reports).
    static_cast<ModeProgress&>(result) = progressAtStart(run.settings, true);
    result.finished = true;
    Reader in(fromChild[0], [&] {
        // A stop signal this process got is the child's too (it ends its mode in order and reports it).
        if (const int sig = interruptSignal(); sig != 0 && sent != sig) {
            ::kill(pid, sig);
            sent = sig;
        }
    });
    bool ended = false;
    try {
        std::vector<Span> spans;
        while (!ended) {
            const auto tag = in.get<Tag>();
            switch (tag) {
            case Tag::Window: {
                const auto window = in.get<WorkWindow>();
                in.getArray<Span>(spans, 1ULL << 32);
                metrics.addWorkerTime(window, spans);
                observer.onWorkerTime(window, spans);
                break;
            }
            case Tag::Update: {
                const auto update = in.get<UpdateEvent>();
                observer.onUpdate(update, metrics.addUpdate(update));
                break;
            }
            case Tag::Evaluation:
                observer.onEvaluation(in.get<EvaluationRecord>());
                break;
            case Tag::Slice: {
                const ModeStanding standing {in.get<ModeProgress>(), &metrics};
                if (afterSlice)
                    afterSlice(standing);
                break;
            }
            case Tag::Result: {
                const auto r = in.get<ResultRecord>();
                static_cast<ModeProgress&>(result) = r.progress;
                result.wallSeconds = r.wallSeconds;
                result.final = r.final;
                result.finalIsLastEvaluation = r.finalIsLastEvaluation;
                result.interrupted = r.interrupted;
                result.paramsDigest = in.getString(1024);
                result.kernelPath = in.getString(1024);
                result.failure = in.getString(1 << 20);
                in.getArray<float>(result.parameters, run.problem->layout.paddedSize());
                ended = true;
                break;
            }
            case Tag::Refused: {
                const std::string why = in.getString(1 << 20);
                endChild(false);
                throw SgdError(why);
            }
            default:
                throw std::runtime_error("garbled");
            }
        }
    } catch (const std::runtime_error& e) {
        if (dynamic_cast<const SgdError*>(&e))
            throw;
        // The stream ended (or made no sense) before the result: the child died. What came is kept.
        const int status = endChild(true);
        result.failure = "the simulated mode's process ended before its result (" + exitText(status) + ")";
        result.finalIsLastEvaluation = true;
        result.final.index = -1;
        result.final.samples = -1;
        result.final.trainLoss = std::numeric_limits<double>::quiet_NaN();
        result.metrics = std::move(metrics);
        return result;
    }
    endChild(false);
    result.metrics = std::move(metrics);
    return result;
}

int serveModeChild()
{
    installInterruptHandlers();
    // The stream goes to the parent on what was standard output; anything else printed goes to standard error.
    const int streamFd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (streamFd < 0 || ::dup2(2, 1) < 0) {
        std::fprintf(stderr, "sgdscope: --mode-child: cannot set up its stream\n");
        return 2;
    }
    Writer out(streamFd);
    try {
        Reader in(0, {});
        RunConfig config;
        Mode mode = Mode::Sync;
        double sliceSeconds = 0.0;
        EngineChoice engine;
        RunShape shape;
        try {
            if (in.get<std::uint32_t>() != streamMagic || in.get<std::uint32_t>() != streamVersion)
                throw SgdError("--mode-child: standard input is not a mode's request (the window and headless runs "
                               "start this process themselves)");
            ConfigBuilder builder;
            builder.applyJson(parseJson(in.getString(16U << 20), "the mode's configuration"), "the mode's request");
            config = builder.resolve();
            mode = in.get<Mode>();
            sliceSeconds = in.get<double>();
            engine = getEngine(in);
            shape = in.get<RunShape>();
        } catch (const SgdError&) {
            throw;
        } catch (const std::runtime_error&) {
            throw SgdError("--mode-child: standard input is not a mode's request (the window and headless runs start "
                           "this process themselves)");
        }
        const PreparedRun run = prepareRun(config, std::make_shared<DataSplit>(loadData(config)), &engine);
        if (!(shapeOf(run) == shape))
            throw SgdError("the simulated mode's process prepared another run than its parent (batch, workers, steps "
                           "or parameters differ)");
        StreamingObserver observer(out);
        ModeResult r;
        if (sliceSeconds > 0) {
            r = runMode(run, mode, observer, sliceSeconds, [&](const Trainer& trainer) {
                out.put(Tag::Slice);
                out.put(progressOf(trainer));
                out.flush();
            });
        } else {
            r = runMode(run, mode, observer);
        }
        out.put(Tag::Result);
        out.put(ResultRecord {r, r.wallSeconds, r.final, r.finalIsLastEvaluation, r.interrupted});
        out.put(r.paramsDigest);
        out.put(r.kernelPath);
        out.put(r.failure);
        out.putArray(r.parameters.data(), r.parameters.size());
        out.flush();
        return 0;
    } catch (const SgdError& e) {
        try {
            out.put(Tag::Refused);
            out.put(std::string(e.what()));
            out.flush();
        } catch (const SgdError&) {
            std::fprintf(stderr, "sgdscope: %s\n", e.what());
        }
        return 2;
    }
}

} // namespace sgdscope
