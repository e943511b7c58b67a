// The fixed reduction tree: whatever P and K, the additions build exactly the canonical tree over chunks.
#include "core/train/ReductionPlan.h"

#include <QTest>

#include <map>
#include <string>

using namespace sgdscope;

namespace {
/// The canonical tree as text: node [lo, lo + size) cut at n is left + right, or its left half if the
/// right one is empty.
std::string canonical(int lo, int size, int n)
{
    if (size == 1)
        return std::to_string(lo);
    const int half = size / 2;
    if (lo + half >= n)
        return canonical(lo, half, n);
    return "(" + canonical(lo, half, n) + "+" + canonical(lo + half, half, n) + ")";
}

std::string canonicalTree(int n)
{
    int size = 1;
    while (size < n)
        size *= 2;
    return canonical(0, size, n);
}

/// Replays a plan symbolically: each buffer holds an expression.
std::string replay(const ReductionPlan& plan)
{
    std::map<int, std::string> buffer;
    for (const auto& w : plan.workers) {
        for (int i = 0; i < w.chunks.size(); ++i) {
            buffer[w.leafBuffer[static_cast<std::size_t>(i)]] = std::to_string(w.chunks.begin + i);
            for (const MergeOp& op : w.mergesAfter[static_cast<std::size_t>(i)])
                buffer[op.dst] = "(" + buffer[op.dst] + "+" + buffer[op.src] + ")";
        }
    }
    for (const MergeOp& op : plan.combine)
        buffer[op.dst] = "(" + buffer[op.dst] + "+" + buffer[op.src] + ")";
    return buffer[plan.rootBuffer];
}
} // namespace

class TestReduction : public QObject
{
    Q_OBJECT
private slots:
    void everySplitBuildsTheCanonicalTree()
    {
        for (int chunks = 1; chunks <= 40; ++chunks) {
            const std::string expected = canonicalTree(chunks);
            for (int workers = 1; workers <= 16; ++workers) {
                for (int accum = 1; accum <= 8; ++accum) {
                    const ReductionPlan plan = ReductionPlan::build(chunks, workers, accum);
                    const std::string got = replay(plan);
                    if (got != expected)
                        QFAIL(qPrintable(QStringLiteral("chunks %1, P %2, K %3: %4 instead of %5")
                                             .arg(chunks)
                                             .arg(workers)
                                             .arg(accum)
                                             .arg(QString::fromStdString(got), QString::fromStdString(expected))));
                }
            }
        }
    }

    void workersTakeContiguousBalancedRuns()
    {
        const ReductionPlan plan = ReductionPlan::build(10, 4, 3);
        QCOMPARE(plan.workers.size(), std::size_t(4));
        const int sizes[] = {3, 3, 2, 2};
        int next = 0;
        for (int w = 0; w < 4; ++w) {
            const auto& wr = plan.workers[static_cast<std::size_t>(w)];
            QCOMPARE(wr.chunks.begin, next);
            QCOMPARE(wr.chunks.size(), sizes[w]);
            next = wr.chunks.end;
            int covered = 0;
            for (const auto& micro : wr.microBatches)
                covered += micro.size();
            QCOMPARE(covered, wr.chunks.size());
        }
        QCOMPARE(next, 10);
    }

    void chunkSizeDependsOnBatchAndModelOnly()
    {
        MlpSpec fashion;
        fashion.layers = {784, 256, 128, 10};
        MlpSpec seed;
        seed.layers = {1, 5, 1};
        QCOMPARE(defaultChunkSize(256, fashion), 64);
        QCOMPARE(defaultChunkSize(50, seed), 50); // a tiny model: one chunk
        QCOMPARE(defaultChunkSize(10, fashion), 10); // never more than the batch
        QCOMPARE(defaultChunkSize(8192, fashion), 256); // at most 32 chunks
        const ChunkLayout layout(50, 16);
        QCOMPARE(layout.chunkCount, 4);
        QCOMPARE(layout.samples(3).begin, 48);
        QCOMPARE(layout.samples(3).end, 50);
    }
};

QTEST_GUILESS_MAIN(TestReduction)
#include "test_reduction.moc"
