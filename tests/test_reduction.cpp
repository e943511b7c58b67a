// The fixed reduction tree: whatever P, K and pass size, the kernels' tree programs and the combine build
// exactly the canonical tree over chunks, each chunk summed over its samples in order.
#include "core/train/ChunkGradients.h"
#include "core/train/ReductionPlan.h"

#include <QTest>

#include <bit>
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

/// Replays a plan symbolically, as the kernels run it: each stack entry and buffer holds an expression; a
/// chunk still being summed is "c<s>" (its samples up to s so far), and must resume exactly there.
/// Returns the root's expression, or what went wrong.
/// Pops `merges` entries, each added below `value` ("(below+value)"), then pushes the sum; false when the
/// stack runs out.
bool mergeOntoStack(std::vector<std::string>& stack, std::string value, int merges)
{
    for (int m = 0; m < merges; ++m) {
        if (stack.empty())
            return false;
        value = "(" + stack.back() + "+" + value + ")";
        stack.pop_back();
    }
    stack.push_back(std::move(value));
    return true;
}

std::string replay(const ReductionPlan& plan, const ChunkLayout& layout, std::vector<int>* samplesSeen)
{
    std::map<int, std::string> buffer;
    for (const auto& w : plan.workers) {
        for (const WorkerPass& pass : w.passes) {
            if (pass.steps.size() != pass.stepChunk.size())
                return "steps and chunks differ in number";
            std::vector<std::string> stack;
            for (int e = 0; e < pass.stackIn; ++e)
                stack.push_back(buffer.at(w.stackBuffers.at(static_cast<std::size_t>(e))));
            int deepest = static_cast<int>(stack.size());
            for (std::size_t i = 0; i < pass.steps.size(); ++i) {
                const kernels::TreeStep& step = pass.steps[i];
                const int c = pass.stepChunk[i];
                const IndexRange chunk = layout.samples(c);
                const int first = pass.samples.begin + step.begin;
                const int last = pass.samples.begin + step.end;
                for (int s = first; s < last; ++s)
                    ++(*samplesSeen)[static_cast<std::size_t>(s)];
                if (step.resume) {
                    const std::string expected = std::to_string(c) + "<" + std::to_string(first) + ">";
                    if (stack.empty() || stack.back() != expected)
                        return "chunk " + std::to_string(c) + " resumes at " + std::to_string(first) + " on "
                            + (stack.empty() ? "nothing" : stack.back());
                    stack.pop_back();
                } else if (first != chunk.begin) {
                    return "chunk " + std::to_string(c) + " starts at sample " + std::to_string(first);
                }
                deepest = std::max(deepest, static_cast<int>(stack.size()) + 1);
                std::string value = std::to_string(c);
                if (step.leaves > 1) {
                    // a whole subtree of single-sample chunks, summed by the kernels level by level
                    const bool whole = std::has_single_bit(static_cast<unsigned>(step.leaves)) && c % step.leaves == 0
                        && layout.chunkSize == 1 && last - first == step.leaves && step.complete && !step.resume
                        && step.leaves <= kernels::maxBlockLeaves;
                    if (!whole)
                        return "a block step at chunk " + std::to_string(c) + " is no whole subtree";
                    value = canonical(c, step.leaves, layout.chunkCount);
                    if (!mergeOntoStack(stack, value, step.merges))
                        return "a merge with nothing below";
                    continue;
                }
                if (!step.complete) {
                    if (step.merges != 0)
                        return "an open chunk merges";
                    stack.push_back(value + "<" + std::to_string(last) + ">");
                    continue;
                }
                if (last != chunk.end)
                    return "chunk " + std::to_string(c) + " completes at " + std::to_string(last);
                if (!mergeOntoStack(stack, value, step.merges))
                    return "a merge with nothing below";
            }
            if (static_cast<int>(stack.size()) != pass.stackOut || deepest > pass.depth)
                return "the stack's bookkeeping is wrong";
            for (int e = 0; e < pass.stackOut; ++e)
                buffer[w.stackBuffers.at(static_cast<std::size_t>(e))] = stack[static_cast<std::size_t>(e)];
        }
    }
    for (const MergeOp& op : plan.combine)
        buffer[op.dst] = "(" + buffer.at(op.dst) + "+" + buffer.at(op.src) + ")";
    return plan.rootBuffer < 0 ? "no root" : buffer.at(plan.rootBuffer);
}
} // namespace

class TestReduction : public QObject
{
    Q_OBJECT
private slots:
    void everySplitBuildsTheCanonicalTree()
    {
        int plans = 0;
        for (int batch = 1; batch <= 200; batch += batch < 20 ? 1 : (batch < 48 ? 7 : 76)) {
            for (int chunk = 1; chunk <= 7; ++chunk) {
                const ChunkLayout layout(batch, chunk);
                const std::string expected = canonicalTree(layout.chunkCount);
                for (int workers = 1; workers <= 9; ++workers) {
                    for (int accum = 1; accum <= 4; ++accum) {
                        for (const int pass : {1, 3, 5, 16, 100, 1000}) { // 100 and 1000: blocks of 64 leaves
                            const ReductionPlan plan = ReductionPlan::build(layout, workers, accum, pass);
                            std::vector<int> seen(static_cast<std::size_t>(batch), 0);
                            const std::string got = replay(plan, layout, &seen);
                            const bool once = std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; });
                            if (got != expected || !once)
                                QFAIL(qPrintable(QStringLiteral("batch %1 in chunks of %2, P %3, K %4, passes of %5: "
                                                                "%6 instead of %7%8")
                                                     .arg(batch)
                                                     .arg(chunk)
                                                     .arg(workers)
                                                     .arg(accum)
                                                     .arg(pass)
                                                     .arg(QString::fromStdString(got), QString::fromStdString(expected),
                                                         once ? QString() : QStringLiteral(" (a sample not once)"))));
                            ++plans;
                        }
                    }
                }
            }
        }
        QVERIFY(plans > 10000);
    }

    void workersTakeContiguousBalancedRuns()
    {
        const ReductionPlan plan = ReductionPlan::build(ChunkLayout(10, 1), 4, 3, 256);
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
            // K micro-batches of whole chunks, one pass each (a pass never spans micro-batches)
            QCOMPARE(static_cast<int>(wr.passes.size()), sizes[w]);
        }
        QCOMPARE(next, 10);
    }

    // The automatic chunk rule depends on the batch only; what it promises, for every batch the window offers.
    // Backup's update: the dropped workers' subtrees count as zero and the sum is scaled to the kept samples' mean.
    // Each worker's subtree roots are filled with values known here (small integers: every sum is exact), so the
    // root after the combine must be the kept workers' values summed, times batch / kept samples; the loss sums
    // only the kept workers' chunks.
    void combineLeavesOutTheDroppedWorkers()
    {
        SyncReduction r;
        r.prepare(100, 4, 3, 1, 256, 8); // 25 chunks of 4 over 3 workers: 9, 8 and 8 chunks (36, 32, 32 samples)
        for (std::size_t w = 0; w < r.plan.workers.size(); ++w) {
            const WorkerReduction& part = r.plan.workers[w];
            for (int root = 0; root < part.roots; ++root) {
                ParamVector& b = r.buffers[static_cast<std::size_t>(part.stackBuffers[static_cast<std::size_t>(root)])];
                for (std::size_t i = 0; i < b.size(); ++i)
                    b[i] = static_cast<float>((w + 1) * 100 + root * 10 + i); // worker, root, element
            }
            for (int c = part.chunks.begin; c < part.chunks.end; ++c)
                r.chunkLoss[static_cast<std::size_t>(c)] = static_cast<double>(w + 1);
        }
        // What the kept workers hold, summed, per element.
        const std::vector<char> dropped {0, 1, 0};
        std::vector<double> expected(8, 0.0);
        for (std::size_t w : {std::size_t(0), std::size_t(2)}) {
            for (int root = 0; root < r.plan.workers[w].roots; ++root)
                for (std::size_t i = 0; i < expected.size(); ++i)
                    expected[i] += static_cast<double>((w + 1) * 100 + root * 10 + i);
        }
        QCOMPARE(r.keptSamples(dropped), 68);
        QCOMPARE(r.keptLossSum(dropped), 9 * 1.0 + 8 * 3.0);
        const float scale = r.keptScale(r.keptSamples(dropped));
        QCOMPARE(scale, static_cast<float>(100.0 / 68));
        const float* g = r.combineKept(dropped, scale, 0, 8);
        for (std::size_t i = 0; i < expected.size(); ++i)
            QCOMPARE(g[i], static_cast<float>(expected[i]) * scale);
        // Nothing dropped: the plain combine, unscaled.
        QCOMPARE(r.keptScale(r.keptSamples({0, 0, 0})), 1.0f);
    }

    void chunkRuleKeepsItsPromises()
    {
        for (int batch = 1; batch <= 60000; batch += batch < 4096 ? 1 : 37) {
            const ChunkLayout layout(batch, defaultChunkSize(batch));
            const QString where
                = QStringLiteral("batch %1: %2 chunks of %3").arg(batch).arg(layout.chunkCount).arg(layout.chunkSize);
            QVERIFY2(layout.chunkCount >= std::min(batch, 32), qPrintable(where)); // every P x K up to 32
            QVERIFY2(layout.chunkSize >= 8 || batch < 256, qPrintable(where)); // full-speed chunks
            QVERIFY2(layout.chunkCount >= 1024 || batch < 8192, qPrintable(where)); // 1,024 simulated workers
            QVERIFY2(layout.chunkCount <= 1152 || batch < 256, qPrintable(where)); // a shallow tree
        }
        QCOMPARE(defaultChunkSize(256), 8);
        QCOMPARE(defaultChunkSize(50), 1); // the parabola: 50 chunks of one sample
        QCOMPARE(chunkSizeFor(64, 50), 50); // a given chunk is cut to the batch
        const ChunkLayout layout(50, 16);
        QCOMPARE(layout.chunkCount, 4);
        QCOMPARE(layout.samples(3).begin, 48);
        QCOMPARE(layout.samples(3).end, 50);
    }
};

QTEST_GUILESS_MAIN(TestReduction)
#include "test_reduction.moc"
