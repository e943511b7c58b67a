// Convolution and pooling layers. The convolution kernels on every instruction-set path this CPU has, against
// references written here from the definitions in KernelTable.h: the same bits as plain std::fma chains in the
// stated order (the forward pass with the padding's zeros as terms, the input gradient over the taps that have an
// output) and the canonical reduction tree over each chunk's samples and positions, for random shapes, strides,
// paddings, channel counts, tails of the vectors and passes, and chunk layouts. Pooling against its definition,
// NaN and ties included. A whole pass of convolutional networks: the same bits on every path, and the gradient of
// the double-precision reference network (ReferenceNetwork.h) within float rounding.
#include "KernelTestTools.h"
#include "ReferenceNetwork.h"

#include "core/common/Rng.h"
#include "core/nn/Initialization.h"
#include "core/nn/ModelText.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/nn/Pooling.h"
#include "core/train/ReductionPlan.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {

// The float pass's gradient against the double reference: float rounding over chains of a few thousand terms
// (a convolution's weight gradient sums every position of every sample), relative to the largest component.
constexpr double kFloatGradientTolerance = 5e-4;
// Its outputs (logits) against the reference's, relative to the largest.
constexpr double kFloatOutputTolerance = 1e-5;
// Filler of buffers around the outputs: a kernel that writes outside them changes it.
constexpr float kUntouched = 7.0f;

struct ConvCase
{
    int samples, channels, height, width, outChannels, kernelHeight, kernelWidth, stride, padding;
};

kernels::ConvGeometry geometryOf(const ConvCase& c)
{
    kernels::ConvGeometry g;
    g.samples = c.samples;
    g.channels = c.channels;
    g.height = c.height;
    g.width = c.width;
    g.outChannels = c.outChannels;
    g.kernelHeight = c.kernelHeight;
    g.kernelWidth = c.kernelWidth;
    g.stride = c.stride;
    g.padding = c.padding;
    g.outHeight = (c.height + 2 * c.padding - c.kernelHeight) / c.stride + 1;
    g.outWidth = (c.width + 2 * c.padding - c.kernelWidth) / c.stride + 1;
    // channel strides with a gap after each channel's samples
    g.inStride = static_cast<std::ptrdiff_t>(c.samples) * c.height * c.width + 5;
    g.outStride = static_cast<std::ptrdiff_t>(c.samples) * g.outHeight * g.outWidth + 3;
    return g;
}

QString caseText(const ConvCase& c)
{
    return QStringLiteral("%1 samples of %2x%3x%4, %5 outputs of %6x%7, stride %8, padding %9")
        .arg(c.samples)
        .arg(c.channels)
        .arg(c.height)
        .arg(c.width)
        .arg(c.outChannels)
        .arg(c.kernelHeight)
        .arg(c.kernelWidth)
        .arg(c.stride)
        .arg(c.padding);
}

/// LeNet-5's two convolutions, shapes around the tiles (6 and 12 rows, 16 and 64 lanes) and random ones.
std::vector<ConvCase> convCases()
{
    std::vector<ConvCase> cases {{3, 1, 28, 28, 6, 5, 5, 1, 2}, {5, 6, 14, 14, 16, 5, 5, 1, 0},
        {2, 3, 8, 8, 13, 3, 3, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 0}, {4, 2, 5, 7, 7, 3, 2, 2, 1},
        {3, 4, 9, 9, 12, 3, 3, 3, 2}, {2, 17, 4, 4, 33, 1, 1, 1, 0}, {1, 2, 20, 3, 5, 4, 3, 1, 2}};
    Rng rng(31);
    for (int i = 0; i < 40; ++i) {
        ConvCase c {};
        c.samples = 1 + static_cast<int>(rng.below(5));
        c.channels = 1 + static_cast<int>(rng.below(6));
        c.height = 1 + static_cast<int>(rng.below(12));
        c.width = 1 + static_cast<int>(rng.below(12));
        c.outChannels = 1 + static_cast<int>(rng.below(20));
        c.kernelHeight = 1 + static_cast<int>(rng.below(5));
        c.kernelWidth = 1 + static_cast<int>(rng.below(5));
        c.stride = 1 + static_cast<int>(rng.below(3));
        c.padding = static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(c.kernelHeight, c.kernelWidth))));
        if (c.kernelHeight > c.height + 2 * c.padding || c.kernelWidth > c.width + 2 * c.padding)
            continue; // NetworkSpec refuses it
        cases.push_back(c);
    }
    return cases;
}

/// Image value (c, s, y, x) of a channel-major pass, or 0 outside the image.
float pixel(const std::vector<float>& x, const kernels::ConvGeometry& g, int c, int s, int y, int xx)
{
    if (y < 0 || y >= g.height || xx < 0 || xx >= g.width)
        return 0.0f;
    return x[static_cast<std::size_t>(c * g.inStride + (static_cast<std::ptrdiff_t>(s) * g.height + y) * g.width + xx)];
}

std::size_t outAt(const kernels::ConvGeometry& g, int o, int s, int y, int x)
{
    return static_cast<std::size_t>(
        o * g.outStride + (static_cast<std::ptrdiff_t>(s) * g.outHeight + y) * g.outWidth + x);
}

std::size_t weightAt(const kernels::ConvGeometry& g, int o, int c, int ky, int kx)
{
    return static_cast<std::size_t>(((o * g.channels + c) * g.kernelHeight + ky) * g.kernelWidth + kx);
}

/// A buffer of `floats` random values, exact zeros among them, and room past its end.
std::vector<float> filled(std::size_t floats, Rng& rng, double scale = 1.0)
{
    return randomFloats(floats, rng, scale);
}

std::vector<float> scratchFor(const Path& p, const kernels::ConvGeometry& g)
{
    return std::vector<float>(p.table->convScratchFloats(g, 0) + 64, 0.0f);
}

} // namespace

class TestConvLayers : public QObject
{
    Q_OBJECT
private slots:
    void paths_data()
    {
        QTest::addColumn<int>("path");
        const auto all = paths();
        for (std::size_t i = 0; i < all.size(); ++i)
            QTest::addRow("%s", all[i].name) << static_cast<int>(i);
    }

    // z = bias + every tap's product, the padding's zeros included, in the order (c, ky, kx).
    void forwardIsTheFmaChain_data() { paths_data(); }
    void forwardIsTheFmaChain()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        Rng rng(1);
        for (const ConvCase& c : convCases()) {
            const kernels::ConvGeometry g = geometryOf(c);
            const auto x = filled(static_cast<std::size_t>(g.channels * g.inStride), rng);
            const auto w = filled(
                static_cast<std::size_t>(g.outChannels * g.channels * g.kernelHeight * g.kernelWidth), rng, 0.2);
            const auto bias = filled(static_cast<std::size_t>(g.outChannels), rng);
            std::vector<float> z(static_cast<std::size_t>(g.outChannels * g.outStride) + 64, kUntouched), want = z;
            for (int o = 0; o < g.outChannels; ++o)
                for (int s = 0; s < g.samples; ++s)
                    for (int oy = 0; oy < g.outHeight; ++oy)
                        for (int ox = 0; ox < g.outWidth; ++ox) {
                            float sum = bias[static_cast<std::size_t>(o)];
                            for (int ch = 0; ch < g.channels; ++ch)
                                for (int ky = 0; ky < g.kernelHeight; ++ky)
                                    for (int kx = 0; kx < g.kernelWidth; ++kx)
                                        sum = std::fma(w[weightAt(g, o, ch, ky, kx)],
                                            pixel(x, g, ch, s, oy * g.stride - g.padding + ky,
                                                ox * g.stride - g.padding + kx),
                                            sum);
                            want[outAt(g, o, s, oy, ox)] = sum;
                        }
            auto scratch = scratchFor(p, g);
            kernels::ConvForwardArgs args;
            args.g = g;
            args.x = x.data();
            args.w = w.data();
            args.bias = bias.data();
            args.z = z.data();
            args.scratch = scratch.data();
            p.table->convForward(args);
            const QString diff = firstDifference(z.data(), want.data(), z.size());
            QVERIFY2(diff.isEmpty(), qPrintable(caseText(c) + QStringLiteral(": ") + diff));
        }
    }

    // dx = the chain over the taps (o, ky, kx) in order that have an output; the kernel's products with zero for
    // the others change no bit.
    void inputGradientIsTheFmaChain_data() { paths_data(); }
    void inputGradientIsTheFmaChain()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        Rng rng(2);
        for (const ConvCase& c : convCases()) {
            const kernels::ConvGeometry g = geometryOf(c);
            const auto dz = filled(static_cast<std::size_t>(g.outChannels * g.outStride), rng);
            const auto w = filled(
                static_cast<std::size_t>(g.outChannels * g.channels * g.kernelHeight * g.kernelWidth), rng, 0.2);
            std::vector<float> dx(static_cast<std::size_t>(g.channels * g.inStride) + 64, kUntouched), want = dx;
            for (int ch = 0; ch < g.channels; ++ch)
                for (int s = 0; s < g.samples; ++s)
                    for (int iy = 0; iy < g.height; ++iy)
                        for (int ix = 0; ix < g.width; ++ix) {
                            float sum = 0.0f;
                            for (int o = 0; o < g.outChannels; ++o)
                                for (int ky = 0; ky < g.kernelHeight; ++ky)
                                    for (int kx = 0; kx < g.kernelWidth; ++kx) {
                                        const int ny = iy + g.padding - ky;
                                        const int nx = ix + g.padding - kx;
                                        if (ny < 0 || nx < 0 || ny % g.stride != 0 || nx % g.stride != 0
                                            || ny / g.stride >= g.outHeight || nx / g.stride >= g.outWidth)
                                            continue;
                                        sum = std::fma(w[weightAt(g, o, ch, ky, kx)],
                                            dz[outAt(g, o, s, ny / g.stride, nx / g.stride)], sum);
                                    }
                            want[static_cast<std::size_t>(ch * g.inStride + (s * g.height + iy) * g.width + ix)] = sum;
                        }
            auto scratch = scratchFor(p, g);
            kernels::ConvInputGradientArgs args;
            args.g = g;
            args.dz = dz.data();
            args.w = w.data();
            args.dx = dx.data();
            args.scratch = scratch.data();
            p.table->convInputGradient(args);
            const QString diff = firstDifference(dx.data(), want.data(), dx.size());
            QVERIFY2(diff.isEmpty(), qPrintable(caseText(c) + QStringLiteral(": ") + diff));
        }
    }

    // The weight and bias gradients of a worker's run in passes with its tree programs equal the canonical tree over
    // its chunks, each leaf the fma chain over its samples in order and each sample's positions in row-major order.
    void weightGradientIsTheCanonicalTree_data() { paths_data(); }
    void weightGradientIsTheCanonicalTree()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        Rng rng(3);
        const std::vector<ConvCase> shapes = convCases();
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            ConvCase c = shapes[i];
            // a batch of samples cut into chunks and passes of their own (single-sample chunks: the tree's blocks)
            c.samples = 1 + static_cast<int>(rng.below(i % 3 == 0 ? 70 : 20));
            const int chunk = i % 4 == 0 ? 1 : 1 + static_cast<int>(rng.below(6));
            const int passSamples = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(c.samples + 2)));
            const kernels::ConvGeometry g = geometryOf(c);
            const auto x = filled(static_cast<std::size_t>(g.channels * g.inStride), rng);
            const auto dz = filled(static_cast<std::size_t>(g.outChannels * g.outStride), rng);
            const ChunkLayout layout(c.samples, std::min(chunk, c.samples));
            const ReductionPlan plan = ReductionPlan::build(layout, 1, 1, passSamples);
            const WorkerReduction& run = plan.workers.front();
            const int taps = g.channels * g.kernelHeight * g.kernelWidth;
            const std::size_t weightFloats = static_cast<std::size_t>(g.outChannels * taps);
            const std::size_t gradientFloats = weightFloats + static_cast<std::size_t>(g.outChannels);
            std::vector<std::vector<float>> stack(
                run.stackBuffers.size(), std::vector<float>(gradientFloats, kUntouched));
            std::vector<float*> weights, biases;
            for (auto& entry : stack) {
                weights.push_back(entry.data());
                biases.push_back(entry.data() + weightFloats);
            }
            for (const WorkerPass& pass : run.passes) {
                const kernels::TreeProgram program = pass.program();
                kernels::ConvGeometry pg = g;
                pg.samples = pass.samples.size();
                std::vector<float> scratch(p.table->convScratchFloats(pg, program.depth) + 64);
                kernels::ConvWeightGradientArgs args;
                args.g = pg;
                args.x = x.data() + static_cast<std::ptrdiff_t>(pass.samples.begin) * g.height * g.width;
                args.dz = dz.data() + static_cast<std::ptrdiff_t>(pass.samples.begin) * g.outHeight * g.outWidth;
                args.program = &program;
                args.weights = weights.data();
                args.biases = biases.data();
                args.scratch = scratch.data();
                p.table->convWeightGradient(args);
            }
            QCOMPARE(run.roots, 1);
            std::vector<float> want(gradientFloats);
            for (int o = 0; o < g.outChannels; ++o) {
                for (int t = 0; t <= taps; ++t) {
                    const int ch = t / (g.kernelHeight * g.kernelWidth);
                    const int ky = t % (g.kernelHeight * g.kernelWidth) / g.kernelWidth;
                    const int kx = t % g.kernelWidth;
                    const auto leaf = [&](int chunkIndex) {
                        const IndexRange r = layout.samples(chunkIndex);
                        float sum = 0.0f;
                        for (int s = r.begin; s < r.end; ++s)
                            for (int oy = 0; oy < g.outHeight; ++oy)
                                for (int ox = 0; ox < g.outWidth; ++ox) {
                                    const float input = t == taps ? 1.0f
                                                                  : pixel(x, g, ch, s, oy * g.stride - g.padding + ky,
                                                                      ox * g.stride - g.padding + kx);
                                    sum = std::fma(dz[outAt(g, o, s, oy, ox)], input, sum);
                                }
                        return sum;
                    };
                    want[t < taps ? static_cast<std::size_t>(o * taps + t) : weightFloats + static_cast<std::size_t>(o)]
                        = canonicalTree(layout.chunkCount, leaf);
                }
            }
            const QString diff = firstDifference(stack.front().data(), want.data(), gradientFloats);
            QVERIFY2(diff.isEmpty(),
                qPrintable(caseText(c)
                    + QStringLiteral(" in chunks of %1, passes of %2: %3")
                          .arg(layout.chunkSize)
                          .arg(passSamples)
                          .arg(diff)));
        }
    }

    // Max pooling keeps the first of equal values and lets NaN through, as PyTorch's max_pool2d; its gradient goes
    // to the value it kept. Average pooling adds a window in row-major order and divides by its size.
    void poolingFollowsItsDefinition()
    {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (const auto& [kh, kw] : {std::pair {2, 2}, std::pair {3, 1}, std::pair {1, 4}, std::pair {3, 3}}) {
            const PoolShape shape {6 * kh, 4 * kw, kh, kw};
            Rng rng(static_cast<std::uint64_t>(10 * kh + kw));
            std::vector<float> in;
            for (int i = 0; i < shape.rows * shape.width; ++i) // many ties, and two NaNs
                in.push_back(i == 5 ? nan : i == shape.width * kh + 1 ? -nan : static_cast<float>(rng.below(4)) - 1.0f);
            const int outs = (shape.rows / kh) * (shape.width / kw);
            std::vector<float> dOut(static_cast<std::size_t>(outs));
            for (float& v : dOut)
                v = static_cast<float>(rng.normal());
            std::vector<float> out(static_cast<std::size_t>(outs)), dIn(in.size(), kUntouched);
            maxPoolForward(shape, in.data(), out.data());
            maxPoolBackward(shape, in.data(), dOut.data(), dIn.data());
            std::vector<float> wantOut(out.size()), wantIn(in.size(), 0.0f);
            std::vector<float> avg(out.size()), wantAvg(out.size()), dAvg(in.size(), kUntouched), wantDAvg(in.size());
            for (int y = 0; y < shape.rows / kh; ++y)
                for (int x = 0; x < shape.width / kw; ++x) {
                    std::size_t best = 0;
                    bool first = true;
                    float sum = 0.0f;
                    for (int ky = 0; ky < kh; ++ky)
                        for (int kx = 0; kx < kw; ++kx) {
                            const auto at = static_cast<std::size_t>((y * kh + ky) * shape.width + x * kw + kx);
                            if (first || in[at] > in[best] || std::isnan(in[at]))
                                best = at;
                            sum = first ? in[at] : sum + in[at];
                            first = false;
                        }
                    const auto o = static_cast<std::size_t>(y * (shape.width / kw) + x);
                    wantOut[o] = in[best];
                    wantIn[best] = dOut[o];
                    wantAvg[o] = sum / static_cast<float>(kh * kw);
                    for (int ky = 0; ky < kh; ++ky)
                        for (int kx = 0; kx < kw; ++kx)
                            wantDAvg[static_cast<std::size_t>((y * kh + ky) * shape.width + x * kw + kx)]
                                = dOut[o] / static_cast<float>(kh * kw);
                }
            avgPoolForward(shape, in.data(), avg.data());
            avgPoolBackward(shape, dOut.data(), dAvg.data());
            const QString window = QStringLiteral("%1x%2: ").arg(kh).arg(kw);
            QString diff = firstDifference(out.data(), wantOut.data(), out.size());
            QVERIFY2(diff.isEmpty(), qPrintable(window + QStringLiteral("max ") + diff));
            diff = firstDifference(dIn.data(), wantIn.data(), dIn.size());
            QVERIFY2(diff.isEmpty(), qPrintable(window + QStringLiteral("max gradient ") + diff));
            diff = firstDifference(avg.data(), wantAvg.data(), avg.size());
            QVERIFY2(diff.isEmpty(), qPrintable(window + QStringLiteral("mean ") + diff));
            diff = firstDifference(dAvg.data(), wantDAvg.data(), dAvg.size());
            QVERIFY2(diff.isEmpty(), qPrintable(window + QStringLiteral("mean gradient ") + diff));
            // the windows that hold a NaN give NaN
            QVERIFY(std::isnan(out[static_cast<std::size_t>(5 / kw)]));
            QVERIFY(std::isnan(out[static_cast<std::size_t>(shape.width / kw + 1 / kw)]));
        }
    }

    // A whole pass (forward, loss, backward with the tree) of convolutional networks on every path gives the scalar
    // path's bits, and its outputs and gradient are the double-precision reference's within float rounding.
    void wholePassAgreesAcrossPathsAndWithTheReference_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("activation");
        QTest::addColumn<int>("loss");
        QTest::addRow("lenet-5") << QStringLiteral("conv6x5x5p2,maxpool2,conv16x5x5,maxpool2,dense120,dense84,dense10")
                                 << int(Activation::Relu) << int(LossKind::SoftmaxCrossEntropy);
        QTest::addRow("strides, avg pool, tanh") << QStringLiteral("conv5x3x3s2p1,avgpool2,conv7x2x2,dense10")
                                                 << int(Activation::Tanh) << int(LossKind::SoftmaxCrossEntropy);
        QTest::addRow("sigmoid mse, to logits") << QStringLiteral("conv4x4x4s3p1,maxpool3,conv10x3x3")
                                                << int(Activation::Sigmoid) << int(LossKind::MeanSquaredError);
    }
    void wholePassAgreesAcrossPathsAndWithTheReference()
    {
        QFETCH(QString, model);
        QFETCH(int, activation);
        QFETCH(int, loss);
        const NetworkSpec spec = networkFromModel(parseModelText(model.toStdString()), TensorShape::image(1, 28, 28),
            static_cast<Activation>(activation), static_cast<LossKind>(loss));
        spec.check();
        const ParameterLayout layout(spec);
        const int features = spec.inputs();
        const int outputs = spec.outputs();
        constexpr int count = 40;
        Rng rng(8);
        std::vector<float> inputs(static_cast<std::size_t>(features * count));
        for (float& v : inputs)
            v = static_cast<float>(rng.uniform() < 0.3 ? 0.0 : rng.uniform()); // pixels, many of them 0
        std::vector<float> targets(static_cast<std::size_t>(outputs * count));
        for (float& v : targets)
            v = static_cast<float>(rng.normal());
        std::vector<std::int32_t> labels(count);
        for (auto& l : labels)
            l = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(outputs)));
        SampleView<float> view;
        view.inputs = inputs.data();
        view.features = features;
        view.count = count;
        if (spec.loss == LossKind::SoftmaxCrossEntropy) {
            view.labels = labels.data();
        } else {
            view.targets = targets.data();
            view.targetRows = outputs;
        }
        const ParamVector params = initialParameters(spec, layout, WeightInit::He, 6);
        std::vector<std::uint32_t> indices(30);
        for (std::size_t i = 0; i < indices.size(); ++i)
            indices[i] = static_cast<std::uint32_t>((i * 7) % count);
        const int n = static_cast<int>(indices.size());
        const ChunkLayout chunks(n, 4);
        const ReductionPlan plan = ReductionPlan::build(chunks, 1, 2, 9); // two micro-batches in passes of 9

        std::vector<float> scalarGradient;
        std::vector<float> scalarOutputs;
        struct Restore
        {
            ~Restore() { kernels::useKernelTableForTesting(nullptr); }
        } restore;
        for (const Path& p : paths()) {
            if (!p.supported)
                continue;
            kernels::useKernelTableForTesting(p.table);
            NetworkWorkspace workspace(spec, 9);
            std::vector<ParamVector> buffers(static_cast<std::size_t>(plan.bufferCount), ParamVector(params.size()));
            std::vector<float*> stack;
            for (const int id : plan.workers.front().stackBuffers)
                stack.push_back(buffers[static_cast<std::size_t>(id)].data());
            for (const WorkerPass& pass : plan.workers.front().passes)
                workspace.pass(layout, params.data(), view, indices.data() + pass.samples.begin, pass.samples.size(),
                    1.0f / static_cast<float>(n), pass.program(), stack.data());
            const ParamVector& g = buffers[static_cast<std::size_t>(plan.rootBuffer)];
            workspace.evaluate(layout, params.data(), view, 0, 5);
            std::vector<float> out;
            for (int s = 0; s < 5; ++s)
                for (int j = 0; j < outputs; ++j)
                    out.push_back(workspace.output(s, j));
            if (scalarGradient.empty()) {
                scalarGradient.assign(g.begin(), g.end());
                scalarOutputs = out;
            } else {
                QString diff = firstDifference(g.data(), scalarGradient.data(), g.size());
                QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(QString::fromLatin1(p.name), diff)));
                diff = firstDifference(out.data(), scalarOutputs.data(), out.size());
                QVERIFY2(diff.isEmpty(),
                    qPrintable(QStringLiteral("%1 outputs: %2").arg(QString::fromLatin1(p.name), diff)));
            }
        }
        kernels::useKernelTableForTesting(nullptr);

        // the double reference
        std::vector<double> dinputs(inputs.begin(), inputs.end());
        std::vector<double> dtargets(targets.begin(), targets.end());
        SampleView<double> dv;
        dv.inputs = dinputs.data();
        dv.features = features;
        dv.count = count;
        if (spec.loss == LossKind::SoftmaxCrossEntropy) {
            dv.labels = labels.data();
        } else {
            dv.targets = dtargets.data();
            dv.targetRows = outputs;
        }
        std::vector<double> dparams(params.begin(), params.end()), reference(params.size());
        testing::ReferenceNetwork network(spec);
        network.gradient(layout, dparams.data(), dv, indices.data(), n, 1.0 / n, reference.data());
        double largest = 0;
        for (const double r : reference)
            largest = std::max(largest, std::fabs(r));
        QVERIFY(largest > 0);
        for (const auto& t : layout.tensors()) {
            for (std::size_t i = 0; i < t.size; ++i) {
                const double got = scalarGradient[t.offset + i];
                const double want = reference[t.offset + i];
                if (std::fabs(got - want) > kFloatGradientTolerance * largest)
                    QFAIL(qPrintable(QStringLiteral("%1[%2]: %3 against the reference's %4")
                                         .arg(QString::fromStdString(t.name))
                                         .arg(i)
                                         .arg(got, 0, 'g', 9)
                                         .arg(want, 0, 'g', 9)));
            }
        }
        double largestOutput = 0;
        std::vector<double> want;
        for (int s = 0; s < 5; ++s)
            for (const double v : network.outputs(layout, dparams.data(), dv, s)) {
                want.push_back(v);
                largestOutput = std::max(largestOutput, std::fabs(v));
            }
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(std::fabs(scalarOutputs[i] - want[i]) <= kFloatOutputTolerance * largestOutput,
                qPrintable(QStringLiteral("output %1: %2 against %3").arg(i).arg(scalarOutputs[i]).arg(want[i])));
    }
};

QTEST_GUILESS_MAIN(TestConvLayers)
#include "test_conv_layers.moc"
