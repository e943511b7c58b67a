// The one derivation of every figure (RunMetrics) on hand-made event streams: known spans and versions in,
// known busy, idle, apply, unaccounted time, staleness and waits out.
#include "core/metrics/RunMetrics.h"
#include "core/metrics/WaitReading.h"
#include "core/metrics/WindowCutter.h"

#include <QTest>

#include <new>
#include <tuple>

using namespace sgdscope;

namespace {
constexpr double kExact = 1e-12;

bool near(double a, double b)
{
    return std::fabs(a - b) <= kExact;
}
} // namespace

class TestMetrics : public QObject
{
    Q_OBJECT
private slots:
    void syncWindowGivesMeasuredTimesAndTheLongestWait()
    {
        RunMetrics m(Mode::Sync);
        // One update of 10 s, two workers. Worker 0 computes 4 s, is delayed 2 s, waits 2 s, applies 1.5 s
        // and 0.5 s are covered by no span; worker 1 computes 2 s, waits 6 s, applies 2 s.
        const std::vector<Span> spans = {{0, SpanKind::Compute, 0, 4, 32}, {0, SpanKind::Delay, 4, 6, 0},
            {0, SpanKind::WaitBarrier, 6, 8, 0}, {0, SpanKind::Apply, 8, 9.5, 0}, {1, SpanKind::Compute, 0, 2, 32},
            {1, SpanKind::WaitBarrier, 2, 8, 0}, {1, SpanKind::Apply, 8, 10, 0}};
        m.addWorkerTime({0, 10, 2}, spans);
        UpdateEvent u;
        u.mode = Mode::Sync;
        const UpdateFigures f = m.addUpdate(u);
        QCOMPARE(f.staleness, std::int64_t(0));
        QVERIFY(near(f.waitSeconds, 6.0)); // worker 1 waited longest

        const WorkerFigures& w0 = m.workers()[0];
        QVERIFY(near(w0.wallSeconds, 10) && near(w0.busy(), 6) && near(w0.idle(), 2) && near(w0.apply(), 1.5));
        QVERIFY(near(w0.unaccounted(), 0.5));
        QVERIFY(near(w0.idleFraction(), 0.2));
        QCOMPARE(w0.samples, std::int64_t(32));
        QCOMPARE(w0.updates, std::int64_t(1));
        const WorkerFigures& w1 = m.workers()[1];
        QVERIFY(near(w1.busy(), 2) && near(w1.idle(), 6) && near(w1.apply(), 2) && near(w1.unaccounted(), 0));
        QVERIFY(near(m.idleFraction(), 8.0 / 20.0));
        QCOMPARE(m.updateWaits().count(), std::int64_t(1));
        QVERIFY(near(m.updateWaits().mean(), 6.0));
        QVERIFY(near(m.wallSeconds(), 10));
    }

    void asyncStalenessComesFromTheVersions()
    {
        RunMetrics m(Mode::Async);
        m.addWorkerTime({0, 1, 2}, std::vector<Span> {});
        // (worker, read, applied): staleness 0, 1, 2, 0, 3; the last push was not applied (divergence).
        const std::vector<std::array<std::int64_t, 3>> pushes = {{0, 0, 0}, {1, 0, 1}, {0, 0, 2}, {1, 3, 3}, {0, 1, 4}};
        for (const auto& [worker, read, applied] : pushes) {
            UpdateEvent u;
            u.mode = Mode::Async;
            u.worker = static_cast<int>(worker);
            u.versionRead = read;
            u.versionApplied = applied;
            QCOMPARE(m.addUpdate(u).staleness, applied - read);
        }
        UpdateEvent lost;
        lost.mode = Mode::Async;
        lost.worker = 1;
        lost.versionRead = 0;
        lost.versionApplied = 5;
        lost.applied = false;
        m.addUpdate(lost);
        const StalenessStats& s = m.staleness();
        QCOMPARE(s.count(), std::int64_t(5));
        QCOMPARE(s.sum(), std::int64_t(6));
        QCOMPARE(s.max(), std::int64_t(3));
        QCOMPARE(s.counts(), (std::vector<std::int64_t> {2, 1, 1, 1}));
        QCOMPARE(s.perWorker()[0].count, std::int64_t(3));
        QCOMPARE(s.perWorker()[0].sum, std::int64_t(5));
        QCOMPARE(s.perWorker()[1].sum, std::int64_t(1));
        QCOMPARE(m.workers()[0].updates, std::int64_t(3));
        QCOMPARE(m.workers()[1].updates, std::int64_t(2));
        QCOMPARE(m.updateWaits().count(), std::int64_t(0)); // sync only
    }

    void segmentFollowsTheCurrentWorkers()
    {
        RunMetrics m(Mode::Async);
        const std::vector<Span> before = {{3, SpanKind::WaitSlice, 0, 2, 0}};
        m.addWorkerTime({0, 2, 4}, before);
        m.startSegment();
        const std::vector<Span> after = {{0, SpanKind::Compute, 2, 3, 8}, {3, SpanKind::Compute, 2, 3, 8}};
        m.addWorkerTime({2, 3, 2}, after);
        QCOMPARE(m.currentWorkers(), 2);
        QCOMPARE(m.workers().size(), std::size_t(4)); // run totals keep every worker that was a member
        QCOMPARE(m.segment().size(), std::size_t(2)); // the segment only the current ones
        QVERIFY(near(m.segment()[0].wallSeconds, 1.0));
        QVERIFY(near(m.segment()[0].busy(), 1.0));
        QVERIFY(near(m.segmentIdleFraction(), 0.0));
        QVERIFY(near(m.workers()[3].wallSeconds, 2.0)); // it left: no wall time after the change
        QVERIFY(near(m.workers()[3].idle(), 2.0));
        QVERIFY(near(m.workers()[3].busy(), 0.0)); // a span of a worker outside the team is not counted
        QVERIFY(near(m.idleFraction(), 2.0 / 10.0));
    }

    // A wait is a straggler's when one worker is over 1.5x the median busy per update, synchronisation overhead
    // when nobody stands out and the median compute is under a quarter of the wait; neither with one worker.
    void waitsReadAsStragglerOrOverhead()
    {
        // The parabola's first screen: 0.4 us of compute per update, 23.7 us waited: overhead.
        WaitReading r = readWaits({{0.4, 1'000'000}, {0.5, 1'000'000}}, 23.7e-6);
        QVERIFY(r.overhead && !r.straggler);
        QVERIFY(near(r.computePerUpdate, 0.45e-6) && near(r.busiestPerUpdate, 0.5e-6));
        // A 4x straggler: its wait is the straggler's, however small the compute.
        r = readWaits({{0.4, 1'000'000}, {0.4, 1'000'000}, {1.6, 1'000'000}}, 23.7e-6);
        QVERIFY(r.straggler && !r.overhead);
        QVERIFY(near(r.computePerUpdate, 0.4e-6) && near(r.busiestPerUpdate, 1.6e-6));
        // Just inside the straggler ratio, and compute at a quarter of the wait: neither.
        r = readWaits({{1.0, 100}, {1.49, 100}}, 0.04);
        QVERIFY(!r.straggler && !r.overhead); // median 12.45 ms of 40 ms waited is over a quarter
        r = readWaits({{1.0, 100}, {1.0, 100}}, 0.0399);
        QVERIFY(!r.overhead); // 10 ms is over a quarter of 39.9 ms
        r = readWaits({{1.0, 100}, {1.0, 100}}, 0.0401);
        QVERIFY(r.overhead);
        // Workers without updates are left out; one worker waits for nobody.
        r = readWaits({{0.4, 1'000'000}, {5.0, 0}}, 23.7e-6);
        QVERIFY(!r.straggler && !r.overhead);
        QVERIFY(!readWaits({}, 1.0).overhead);
        QVERIFY(!readWaits({{1.0, 100}, {1.0, 100}}, 0.0).overhead);
    }

    void waitBinsAreLogarithmic()
    {
        QCOMPARE(WaitStats::binOf(0.0), 0);
        QCOMPARE(WaitStats::binOf(0.9e-6), 0);
        QCOMPARE(WaitStats::binOf(1e-6), 1);
        QCOMPARE(WaitStats::binOf(1e-3), 1 + 3 * WaitStats::binsPerDecade);
        QCOMPARE(WaitStats::binOf(1e9), WaitStats::binCount - 1);
        for (int b = 1; b < WaitStats::binCount - 1; ++b) {
            QCOMPARE(WaitStats::binOf(WaitStats::lowerEdge(b) * 1.0001), b);
            QCOMPARE(WaitStats::binOf(WaitStats::upperEdge(b) * 0.9999), b);
        }
        WaitStats w;
        for (const double s : {0.001, 0.002, 0.004, 0.1})
            w.add(s);
        QVERIFY(near(w.mean(), 0.10700 / 4));
        QVERIFY(near(w.max(), 0.1));
        QVERIFY(w.percentile(0.5) >= 0.002 && w.percentile(0.5) < 0.002 * 1.26);
        QVERIFY(near(w.percentile(1.0), 0.1));
    }
    // A report that runs out of memory (issue 31): the windows handed on before it are gone, it stays first with what
    // its reporter noted of it, and the next flush goes on there. Before, every window of the flush was handed on
    // again, and rank 0 counted and recorded them twice.
    void aFailedReportLeavesItsWindowFirst()
    {
        WindowCutter cutter(1);
        for (int w = 0; w < 3; ++w) {
            cutter.add(Span {0, SpanKind::Compute, w * 1.0, w * 1.0 + 0.5, 10, -1});
            std::vector<UpdateEvent> updates(2);
            updates[0].index = 2 * w;
            updates[1].index = 2 * w + 1;
            cutter.close({WorkWindow {w * 1.0, w * 1.0 + 1.0, 1}, 0.0, updates});
        }
        cutter.knownUntil(0, 3.0);
        // Each hand-over: the window's start, what had been noted of it, its spans.
        using Call = std::tuple<double, bool, std::size_t, std::size_t>;
        std::vector<Call> calls;
        std::vector<std::int64_t> reported;
        bool failOnce = true;
        const WindowCutter::Report report
            = [&](const WorkWindow& window, std::span<const Span> spans, WindowCutter::Closed& closed) {
                  calls.emplace_back(window.start, closed.timeCounted, closed.updatesReported, spans.size());
                  closed.timeCounted = true;
                  while (closed.updatesReported < closed.updates.size()) {
                      const UpdateEvent& u = closed.updates[closed.updatesReported];
                      if (u.index == 3 && failOnce) {
                          failOnce = false;
                          throw std::bad_alloc();
                      }
                      ++closed.updatesReported;
                      reported.push_back(u.index);
                  }
              };
        QVERIFY_THROWS_EXCEPTION(std::bad_alloc, cutter.flush(report));
        QCOMPARE(calls, (std::vector<Call> {{0.0, false, 0, 1}, {1.0, false, 0, 1}}));
        cutter.flush(report);
        // Window 0 is not handed on again; window 1 comes back with what was noted and its span.
        QCOMPARE(
            calls, (std::vector<Call> {{0.0, false, 0, 1}, {1.0, false, 0, 1}, {1.0, true, 1, 1}, {2.0, false, 0, 1}}));
        QCOMPARE(reported, (std::vector<std::int64_t> {0, 1, 2, 3, 4, 5}));
        cutter.flush(report, true);
        QCOMPARE(calls.size(), std::size_t {4}); // nothing left
    }
    // A report that failed before it took anything (the figures ran out of memory) gets its window again with the
    // same spans, cut and shifted as the first time. Before, the spans were gone: the time counted on the retry
    // held no work, and the update after it read a stale wait.
    void aFailedReportGetsTheSameSpansAgain()
    {
        WindowCutter cutter(2);
        cutter.add(Span {0, SpanKind::Compute, 0.0, 0.75, 10, -1});
        cutter.add(Span {1, SpanKind::Compute, 0.0, 1.5, 10, -1}); // crosses into the second window
        cutter.close({WorkWindow {0.0, 1.0, 2}, 0.5, {UpdateEvent {}}});
        cutter.close({WorkWindow {1.0, 2.0, 2}, 0.5, {UpdateEvent {}}});
        cutter.knownUntil(0, 2.0);
        cutter.knownUntil(1, 2.0);
        using Seen = std::tuple<double, int, double, double>; // window start, worker, span start, end
        std::vector<Seen> seen;
        int failures = 1;
        const WindowCutter::Report report
            = [&](const WorkWindow& window, std::span<const Span> spans, WindowCutter::Closed&) {
                  for (const Span& s : spans)
                      seen.emplace_back(window.start, s.worker, s.start, s.end);
                  if (failures-- > 0)
                      throw std::bad_alloc();
              };
        QVERIFY_THROWS_EXCEPTION(std::bad_alloc, cutter.flush(report));
        cutter.flush(report);
        QCOMPARE(seen,
            (std::vector<Seen> {
                {0.5, 0, 0.5, 1.25}, {0.5, 1, 0.5, 1.5}, {0.5, 0, 0.5, 1.25}, {0.5, 1, 0.5, 1.5}, {1.5, 1, 1.5, 2.0}}));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
