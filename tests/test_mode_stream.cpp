// The stream between a simulated mode's process and its parent (core/run/ModeStream): what the parent keeps when the
// stream is cut short, or when recording what came runs out of memory.
#include "core/metrics/RunMetrics.h"
#include "core/run/ModeStream.h"

#include <QTest>

#include <new>

#include <unistd.h>

using namespace sgdscope;

namespace {

UpdateEvent pushAt(std::int64_t index)
{
    UpdateEvent u;
    u.mode = Mode::Async;
    u.worker = static_cast<int>(index % 2);
    u.index = index;
    u.versionRead = std::max<std::int64_t>(0, index - 1);
    u.versionApplied = index;
    u.samples = 32;
    u.samplesSeen = 32 * (index + 1);
    u.seconds = 0.5 * static_cast<double>(index + 1);
    u.batchLoss = 1.0;
    u.applied = true;
    return u;
}

EvaluationRecord evaluationAt(std::int64_t updates)
{
    EvaluationRecord e;
    e.mode = Mode::Async;
    e.index = updates;
    e.samples = 32 * updates;
    e.seconds = 0.5 * static_cast<double>(updates);
    e.trainLoss = 2.0 - 0.1 * static_cast<double>(updates);
    return e;
}

/// A child's stream that ends before its result: `updates` pushes, an evaluation after the second and the fourth.
/// The write end is closed, so the reader meets the end after the last record.
int streamCutShort(int updates)
{
    int fds[2];
    if (::pipe(fds) != 0)
        qFatal("pipe failed");
    {
        ModeStreamWriter out(fds[1]);
        StreamingObserver child(out);
        for (int i = 0; i < updates; ++i) {
            child.onUpdate(pushAt(i), {});
            if (i == 1 || i == 3)
                child.onEvaluation(evaluationAt(i + 1));
        }
    }
    ::close(fds[1]);
    return fds[0];
}

/// The parent's recorder: keeps the updates it took; the first `failures` reports of update `failAt` run out of
/// memory, and so does the report of an evaluation at `evaluationFailAt`.
class Recorder : public TrainingObserver
{
public:
    explicit Recorder(std::int64_t failAt, int failures = 1, std::int64_t evaluationFailAt = -1)
        : m_failAt(failAt)
        , m_failures(failures)
        , m_evaluationFailAt(evaluationFailAt)
    {
    }
    void onWorkerTime(const WorkWindow&, std::span<const Span>) override { }
    void onUpdate(const UpdateEvent& update, const UpdateFigures&) override
    {
        if (update.index == m_failAt && m_failures > 0) {
            --m_failures;
            throw std::bad_alloc();
        }
        rows.push_back(update.index);
    }
    void onEvaluation(const EvaluationRecord& e) override
    {
        if (e.index == m_evaluationFailAt)
            throw std::bad_alloc();
        evaluations.push_back(e.index);
    }
    bool stopRequested() override { return false; }

    std::vector<std::int64_t> rows;
    std::vector<std::int64_t> evaluations;

private:
    std::int64_t m_failAt;
    int m_failures;
    std::int64_t m_evaluationFailAt;
};

/// The parent's side of one reading: its figures, the mode's result and an update left to report.
struct Parent
{
    RunMetrics metrics {Mode::Async};
    ModeResult result;
    UnreportedUpdate unreported;
};

enum class Threw
{
    Nothing,
    StreamEnded, // std::runtime_error
    OutOfMemory, // std::bad_alloc
};

/// Reads a stream of `updates` pushes, cut short, into `parent` with `recorder`: what the reading threw.
Threw readCutShort(int updates, Recorder& recorder, Parent& parent)
{
    const int fd = streamCutShort(updates);
    ModeStreamReader in(fd, {});
    Threw threw = Threw::Nothing;
    try {
        readModeStream(in, parent.metrics, recorder, {}, parent.result, 0, parent.unreported);
    } catch (const std::bad_alloc&) {
        threw = Threw::OutOfMemory;
    } catch (const std::runtime_error&) {
        threw = Threw::StreamEnded;
    }
    ::close(fd);
    return threw;
}

} // namespace

class TestModeStream : public QObject
{
    Q_OBJECT
private slots:
    void aStreamCutShortKeepsItsUpdatesAndLastEvaluation()
    {
        Recorder recorder(-1);
        Parent p;
        p.result.targetLoss = 1.7; // met by the second evaluation (loss 1.6 at update 4), not the first (1.8)
        QVERIFY(readCutShort(5, recorder, p) == Threw::StreamEnded);
        auto& [metrics, result, unreported] = p;
        QCOMPARE(recorder.rows.size(), std::size_t(5));
        QVERIFY(result.target.reached);
        QCOMPARE(result.target.updates, std::int64_t(4));
        QCOMPARE(result.target.seconds, 2.0);
        QCOMPARE(metrics.staleness().count(), std::int64_t(5));
        QCOMPARE(result.updates, std::int64_t(5));
        QCOMPARE(result.samples, std::int64_t(5 * 32));
        QCOMPARE(result.seconds, 2.5);
        QVERIFY(!unreported.pending);
        // The last evaluation that came is the result's, as a run that stopped reports its last evaluation.
        QCOMPARE(result.final.index, std::int64_t(4));
        QCOMPARE(result.final.trainLoss, 2.0 - 0.4);
    }

    void aStreamWithoutEvaluationsSaysSo()
    {
        Recorder recorder(-1);
        Parent p;
        p.result.final.index = 7; // whatever the caller had: the stream's reading starts with none
        QVERIFY(readCutShort(1, recorder, p) == Threw::StreamEnded);
        auto& [metrics, result, unreported] = p;
        QCOMPARE(result.updates, std::int64_t(1));
        QCOMPARE(result.final.index, std::int64_t(-1));
        QVERIFY(std::isnan(result.final.trainLoss));
    }

    void anUpdateWhoseReportRanOutOfMemoryIsKeptToReportAgain()
    {
        Recorder recorder(2);
        Parent p;
        QVERIFY(readCutShort(5, recorder, p) == Threw::OutOfMemory);
        auto& [metrics, result, unreported] = p;
        // Update 2 is in the figures and counted, but not in the rows: it waits in `unreported`.
        QCOMPARE(metrics.staleness().count(), std::int64_t(3));
        QCOMPARE(result.updates, std::int64_t(3));
        QCOMPARE(recorder.rows, (std::vector<std::int64_t> {0, 1}));
        QVERIFY(unreported.pending);
        QCOMPARE(unreported.update.index, std::int64_t(2));
        QCOMPARE(unreported.figures.staleness, std::int64_t(1));
        QCOMPARE(result.final.index, std::int64_t(2));
        // Reported again, the rows agree with the count.
        QVERIFY(reportAgain(unreported, recorder));
        QVERIFY(!unreported.pending);
        QCOMPARE(recorder.rows, (std::vector<std::int64_t> {0, 1, 2}));
        QVERIFY(reportAgain(unreported, recorder)); // nothing pending: nothing reported twice
        QCOMPARE(static_cast<std::int64_t>(recorder.rows.size()), result.updates);
    }

    void anUpdateThatCannotBeReportedAgainStaysPending()
    {
        Recorder recorder(3, 2);
        Parent p;
        QVERIFY(readCutShort(5, recorder, p) == Threw::OutOfMemory);
        auto& [metrics, result, unreported] = p;
        QVERIFY(!reportAgain(unreported, recorder));
        QVERIFY(unreported.pending);
        QCOMPARE(unreported.update.index, std::int64_t(3));
        QCOMPARE(recorder.rows, (std::vector<std::int64_t> {0, 1, 2}));
    }

    // An evaluation whose recording ran out of memory is still the last that came (a recorder may hold it already).
    void anEvaluationWhoseReportRanOutOfMemoryIsTheLastThatCame()
    {
        Recorder recorder(-1, 0, 4);
        Parent p;
        p.result.targetLoss = 1.7; // met by that evaluation (1.6)
        QVERIFY(readCutShort(5, recorder, p) == Threw::OutOfMemory);
        auto& [metrics, result, unreported] = p;
        QCOMPARE(result.final.index, std::int64_t(4));
        QVERIFY(result.target.reached);
        QCOMPARE(result.target.updates, std::int64_t(4));
        QCOMPARE(result.updates, std::int64_t(4));
        QVERIFY(!unreported.pending);
    }
};

QTEST_APPLESS_MAIN(TestModeStream)
#include "test_mode_stream.moc"
