// The training kernels on every instruction-set path this CPU has, against references written here
// independently: the same bits as plain std::fma chains in index order and the canonical reduction tree, for the
// products the presets and tests use, for tails and boundaries, and for random shapes and chunk layouts; the
// element-wise functions lane for lane like their scalar form, and within their stated accuracy of the C
// library; and a whole forward and backward pass against the double-precision reference MLP. Paths this CPU
// lacks are reported as skipped.
#include "KernelTestTools.h"
#include "ReferenceNetwork.h"

#include "core/common/Error.h"
#include "core/common/PortableMath.h"
#include "core/common/Rng.h"
#include "core/data/GeneratedData.h"
#include "core/nn/Initialization.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/nn/kernels/Isa.h"
#include "core/nn/kernels/KernelTable.h"
#include "core/train/DatasetView.h"
#include "core/train/ReductionPlan.h"

#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

using namespace sgdscope;
using namespace sgdscope::testing;

namespace {

// The float path's gradient against the double reference: float rounding over a few hundred terms.
constexpr double kFloatGradientTolerance = 2e-4;
// The element-wise functions against the C library in double, in units in the last place of the float result.
constexpr double kExpUlps = 2.0;
constexpr double kLogUlps = 2.0;
constexpr double kTanhUlps = 8.0; // the rational approximation's worst, near saturation (measured 6.9)
constexpr double kTanhAbsolute = 5e-7;
constexpr double kLogisticUlps = 4.0;

struct Shape
{
    int m; // samples
    int n; // outputs
    int k; // inputs
};

/// The product shapes of the presets and tests (samples per pass x outputs x inputs), and tails around the
/// tile sizes (6 and 12 rows, 8, 16, 32 and 64 columns, k-blocks of 128, 256 and 2048).
std::vector<Shape> productShapes()
{
    std::vector<Shape> shapes {{50, 5, 1}, {50, 1, 5}, {1, 5, 1}, {256, 256, 784}, {256, 128, 256}, {256, 10, 128},
        {128, 256, 784}, {96, 256, 784}, {32, 10, 128}, {240, 16, 8}, {240, 12, 16}, {240, 3, 12}, {256, 256, 64},
        {256, 10, 256}, {64, 4, 2}, {64, 1, 4}, {256, 256, 256}, {256, 256, 128}, {256, 128, 10}, {256, 256, 10},
        {128, 256, 128}, {128, 128, 10}, {128, 64, 256}};
    for (const int m : {1, 5, 6, 7, 13})
        for (const int n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65})
            for (const int k : {1, 3, 127, 129, 257})
                shapes.push_back({m, n, k});
    Rng rng(2024);
    for (int i = 0; i < 40; ++i)
        shapes.push_back({1 + static_cast<int>(rng.below(70)), 1 + static_cast<int>(rng.below(140)),
            1 + static_cast<int>(rng.below(300))});
    return shapes;
}

} // namespace

class TestKernels : public QObject
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

    // z = bias + a w^T: every output an fma chain over the inputs in order, starting from the bias.
    void forwardIsTheFmaChain_data() { paths_data(); }
    void forwardIsTheFmaChain()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        Rng rng(1);
        for (const Shape& s : productShapes()) {
            const std::ptrdiff_t lda = s.k + 3;
            const std::ptrdiff_t ldz = s.n + 5;
            const auto a = randomFloats(static_cast<std::size_t>(s.m * lda), rng);
            const auto w = randomFloats(static_cast<std::size_t>(s.n * s.k), rng, 0.1);
            const auto bias = randomFloats(static_cast<std::size_t>(s.n), rng);
            std::vector<float> z(static_cast<std::size_t>(s.m * ldz) + 64, 7.0f), want = z;
            for (int i = 0; i < s.m; ++i)
                for (int j = 0; j < s.n; ++j) {
                    float sum = bias[static_cast<std::size_t>(j)];
                    for (int kk = 0; kk < s.k; ++kk)
                        sum = std::fma(
                            a[static_cast<std::size_t>(i * lda + kk)], w[static_cast<std::size_t>(j * s.k + kk)], sum);
                    want[static_cast<std::size_t>(i * ldz + j)] = sum;
                }
            std::vector<float> pack(p.table->packFloats(s.k, s.n) + 64);
            kernels::LinearForwardArgs x;
            x.m = s.m;
            x.n = s.n;
            x.k = s.k;
            x.a = a.data();
            x.lda = lda;
            x.w = w.data();
            x.bias = bias.data();
            x.z = z.data();
            x.ldz = ldz;
            x.pack = pack.data();
            p.table->linearForward(x);
            // every output, and nothing written outside them (the padding keeps its 7s)
            const QString diff = firstDifference(z.data(), want.data(), z.size());
            QVERIFY2(
                diff.isEmpty(), qPrintable(QStringLiteral("%1 x %2 x %3: %4").arg(s.m).arg(s.n).arg(s.k).arg(diff)));
        }
    }

    // p = d w: every output an fma chain over the outputs of the layer in order, starting from 0.
    void inputGradientIsTheFmaChain_data() { paths_data(); }
    void inputGradientIsTheFmaChain()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        Rng rng(2);
        for (const Shape& s : productShapes()) {
            // here n = the layer's inputs (the gradient's width), k = its outputs
            const std::ptrdiff_t ldd = s.k + 1;
            const std::ptrdiff_t ldp = s.n + 2;
            const auto d = randomFloats(static_cast<std::size_t>(s.m * ldd), rng);
            const auto w = randomFloats(static_cast<std::size_t>(s.k * s.n), rng, 0.1);
            std::vector<float> out(static_cast<std::size_t>(s.m * ldp) + 64, 7.0f), want = out;
            for (int i = 0; i < s.m; ++i)
                for (int j = 0; j < s.n; ++j) {
                    float sum = 0.0f;
                    for (int kk = 0; kk < s.k; ++kk)
                        sum = std::fma(
                            d[static_cast<std::size_t>(i * ldd + kk)], w[static_cast<std::size_t>(kk * s.n + j)], sum);
                    want[static_cast<std::size_t>(i * ldp + j)] = sum;
                }
            std::vector<float> pack(p.table->packFloats(s.k, s.n) + 64);
            kernels::InputGradientArgs x;
            x.m = s.m;
            x.n = s.n;
            x.k = s.k;
            x.d = d.data();
            x.ldd = ldd;
            x.w = w.data();
            x.p = out.data();
            x.ldp = ldp;
            x.pack = pack.data();
            p.table->inputGradient(x);
            const QString diff = firstDifference(out.data(), want.data(), out.size());
            QVERIFY2(
                diff.isEmpty(), qPrintable(QStringLiteral("%1 x %2 x %3: %4").arg(s.m).arg(s.n).arg(s.k).arg(diff)));
        }
    }

    // The weight and bias gradients of a worker's run, in passes with its tree programs (stack entries that
    // wait between passes, chunks cut by a pass), equal the canonical tree over its chunks, each leaf the fma
    // chain of its samples: for the layer shapes of the presets, every orientation and tail, and random
    // chunk layouts and pass sizes.
    void weightGradientIsTheCanonicalTree_data() { paths_data(); }
    void weightGradientIsTheCanonicalTree()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        struct Case
        {
            int samples, out, in, chunk, pass;
        };
        std::vector<Case> cases {{50, 5, 1, 1, 256}, {50, 1, 5, 1, 256}, {200, 5, 1, 1, 256}, {200, 3, 2, 1, 130},
            {256, 256, 784, 8, 256}, {256, 128, 256, 8, 256}, {256, 10, 128, 64, 256}, {128, 10, 128, 8, 40},
            {96, 16, 8, 32, 20}, {240, 3, 12, 7, 64}, {64, 33, 31, 5, 9}, {17, 65, 16, 3, 4}, {50, 12, 1, 50, 7}};
        Rng rng(3);
        for (int i = 0; i < 30; ++i)
            cases.push_back({1 + static_cast<int>(rng.below(120)), 1 + static_cast<int>(rng.below(70)),
                1 + static_cast<int>(rng.below(70)), 1 + static_cast<int>(rng.below(20)),
                1 + static_cast<int>(rng.below(60))});
        for (const Case& c : cases) {
            const std::ptrdiff_t ldd = c.out + 3;
            const std::ptrdiff_t lda = c.in + 2; // column `in` holds the 1 of the bias
            const auto d = randomFloats(static_cast<std::size_t>(c.samples * ldd), rng);
            auto a = randomFloats(static_cast<std::size_t>(c.samples * lda), rng);
            for (int s = 0; s < c.samples; ++s)
                a[static_cast<std::size_t>(s * lda + c.in)] = 1.0f;
            const ChunkLayout layout(c.samples, std::min(c.chunk, c.samples));
            // One worker takes every chunk: its run is the whole tree.
            const ReductionPlan plan = ReductionPlan::build(layout, 1, 1, c.pass);
            const WorkerReduction& run = plan.workers.front();
            const std::size_t gradientFloats = static_cast<std::size_t>(c.out * c.in + c.out);
            std::vector<std::vector<float>> stack(run.stackBuffers.size(), std::vector<float>(gradientFloats, 9.0f));
            std::vector<float*> weights, biases;
            for (auto& entry : stack) {
                weights.push_back(entry.data());
                biases.push_back(entry.data() + c.out * c.in);
            }
            std::vector<float> tiles(p.table->slotFloats(40));
            for (const WorkerPass& pass : run.passes) {
                const kernels::TreeProgram program = pass.program();
                kernels::WeightGradientArgs x;
                x.out = c.out;
                x.in = c.in;
                x.samples = pass.samples.size();
                x.d = d.data() + pass.samples.begin * ldd;
                x.ldd = ldd;
                x.a = a.data() + pass.samples.begin * lda;
                x.lda = lda;
                x.program = &program;
                x.weights = weights.data();
                x.biases = biases.data();
                x.tiles = tiles.data();
                p.table->weightGradient(x);
            }
            QCOMPARE(run.roots, 1);
            std::vector<float> want(gradientFloats);
            for (int o = 0; o < c.out; ++o) {
                for (int i = 0; i <= c.in; ++i) {
                    const auto leaf = [&](int chunk) {
                        const IndexRange r = layout.samples(chunk);
                        float sum = 0.0f;
                        for (int s = r.begin; s < r.end; ++s)
                            sum = std::fma(d[static_cast<std::size_t>(s * ldd + o)],
                                a[static_cast<std::size_t>(s * lda + i)], sum);
                        return sum;
                    };
                    want[static_cast<std::size_t>(i < c.in ? o * c.in + i : c.out * c.in + o)]
                        = canonicalTree(layout.chunkCount, leaf);
                }
            }
            const QString diff = firstDifference(stack.front().data(), want.data(), gradientFloats);
            QVERIFY2(diff.isEmpty(),
                qPrintable(QStringLiteral("%1 samples in chunks of %2, passes of %3, %4 x %5: %6")
                               .arg(c.samples)
                               .arg(layout.chunkSize)
                               .arg(c.pass)
                               .arg(c.out)
                               .arg(c.in)
                               .arg(diff)));
        }
    }

    // The activations and their derivatives, vector lane or tail, as the scalar functions compute them, on
    // ordinary values, the ends of their ranges and special values.
    void elementWiseFunctionsMatchTheirScalarForm_data() { paths_data(); }
    void elementWiseFunctionsMatchTheirScalarForm()
    {
        QFETCH(int, path);
        const Path p = paths()[static_cast<std::size_t>(path)];
        if (!p.supported)
            QSKIP("this CPU lacks the path's instructions");
        std::vector<float> x;
        Rng rng(4);
        for (int i = 0; i < 3001; ++i) // an odd count: a partial last vector
            x.push_back(static_cast<float>(20.0 * rng.uniform() - 10.0));
        const float inf = std::numeric_limits<float>::infinity();
        for (const float v : {0.0f, -0.0f, 1e-40f, -1e-40f, 7.9053f, -7.9054f, 88.4f, -88.0f, 1e30f, -1e30f, inf, -inf,
                 std::numeric_limits<float>::quiet_NaN(), 0.625f, -0.625f, 1.0f})
            x.push_back(v);
        const std::pair<kernels::ElementFunction, float (*)(float)> functions[]
            = {{kernels::ElementFunction::Tanh, [](float v) { return portable::tanh(v); }},
                {kernels::ElementFunction::Sigmoid, [](float v) { return portable::logistic(v); }},
                {kernels::ElementFunction::Relu, [](float v) { return v < 0.0f ? 0.0f : v; }},
                {kernels::ElementFunction::Identity, [](float v) { return v; }}};
        for (const auto& [f, scalar] : functions) {
            std::vector<float> got = x;
            p.table->activate(f, got.data(), got.size());
            std::vector<float> want;
            for (const float v : x)
                want.push_back(scalar(v));
            const QString diff = firstDifference(got.data(), want.data(), got.size());
            QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("function %1: %2").arg(int(f)).arg(diff)));

            // the derivative, in terms of the activation
            std::vector<float> delta = x;
            std::reverse(delta.begin(), delta.end());
            std::vector<float> wantDelta = delta;
            for (std::size_t i = 0; i < delta.size(); ++i) {
                const float a = want[i];
                float& d = wantDelta[i];
                switch (f) {
                case kernels::ElementFunction::Tanh:
                    d = d * (1.0f - a * a);
                    break;
                case kernels::ElementFunction::Relu:
                    d = a > 0.0f ? d : 0.0f;
                    break;
                case kernels::ElementFunction::Sigmoid:
                    d = d * (a * (1.0f - a));
                    break;
                case kernels::ElementFunction::Identity:
                    break;
                }
            }
            p.table->multiplyByDerivative(f, delta.data(), want.data(), delta.size());
            const QString ddiff = firstDifference(delta.data(), wantDelta.data(), delta.size());
            QVERIFY2(ddiff.isEmpty(), qPrintable(QStringLiteral("derivative %1: %2").arg(int(f)).arg(ddiff)));
        }
    }

    // Our exp, log, tanh and logistic against the C library in double. (The lane-by-lane test above compares the
    // vector paths with these scalar forms; on the scalar tables it holds by construction.)
    void portableFunctionsAreAccurate()
    {
        auto ulpsOff = [](double got, double exact) {
            const float f = static_cast<float>(exact);
            const double ulp
                = std::fabs(static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - f);
            return std::fabs(got - exact) / std::max(ulp, 1e-45);
        };
        Rng rng(5);
        double worstExp = 0, worstLog = 0, worstTanh = 0, worstTanhAbs = 0, worstLogistic = 0;
        for (int i = 0; i < 400000; ++i) {
            const auto e = static_cast<float>(175.0 * rng.uniform() - 87.0);
            worstExp = std::max(worstExp, ulpsOff(portable::exp(e), std::exp(static_cast<double>(e))));
            const auto l = static_cast<float>(std::exp(120.0 * rng.uniform() - 60.0));
            worstLog = std::max(worstLog, ulpsOff(portable::log(l), std::log(static_cast<double>(l))));
            const auto t = static_cast<float>(24.0 * rng.uniform() - 12.0);
            const double exactTanh = std::tanh(static_cast<double>(t));
            worstTanh = std::max(worstTanh, ulpsOff(portable::tanh(t), exactTanh));
            worstTanhAbs = std::max(worstTanhAbs, std::fabs(portable::tanh(t) - exactTanh));
            worstLogistic = std::max(
                worstLogistic, ulpsOff(portable::logistic(t), 1.0 / (1.0 + std::exp(-static_cast<double>(t)))));
            const double u = std::exp(-700.0 * rng.uniform());
            QVERIFY(std::fabs(portable::log(u) - std::log(u)) <= 4e-16 * std::fabs(std::log(u)) + 1e-300);
            const double v = 1400.0 * rng.uniform() - 700.0;
            QVERIFY(std::fabs(portable::exp(v) - std::exp(v)) <= 4e-16 * std::exp(v));
        }
        QVERIFY2(worstExp <= kExpUlps, qPrintable(QStringLiteral("exp: %1 ulp").arg(worstExp)));
        QVERIFY2(worstLog <= kLogUlps, qPrintable(QStringLiteral("log: %1 ulp").arg(worstLog)));
        QVERIFY2(worstTanh <= kTanhUlps && worstTanhAbs <= kTanhAbsolute,
            qPrintable(QStringLiteral("tanh: %1 ulp, %2 absolute").arg(worstTanh).arg(worstTanhAbs)));
        QVERIFY2(worstLogistic <= kLogisticUlps, qPrintable(QStringLiteral("logistic: %1 ulp").arg(worstLogistic)));
        QCOMPARE(portable::exp(-100.0f), 0.0f);
        QVERIFY(std::isinf(portable::exp(100.0f)));
        QVERIFY(std::isnan(portable::exp(std::numeric_limits<float>::quiet_NaN())));
        QVERIFY(std::isnan(portable::tanh(std::numeric_limits<float>::quiet_NaN())));
        QCOMPARE(portable::tanh(20.0f), 1.0f);
        QVERIFY(std::isinf(portable::log(0.0f)) && portable::log(0.0f) < 0);
        QVERIFY(std::isnan(portable::log(-1.0f)));
    }

    // A whole pass (forward, loss, backward with the tree) on every path gives the scalar path's bits, and its
    // gradient is the double-precision reference's within float rounding.
    void wholePassAgreesAcrossPathsAndWithTheReference_data()
    {
        QTest::addColumn<int>("activation");
        QTest::addColumn<int>("loss");
        QTest::addRow("tanh-mse") << int(Activation::Tanh) << int(LossKind::MeanSquaredError);
        QTest::addRow("relu-cross-entropy") << int(Activation::Relu) << int(LossKind::SoftmaxCrossEntropy);
        QTest::addRow("sigmoid-cross-entropy") << int(Activation::Sigmoid) << int(LossKind::SoftmaxCrossEntropy);
        QTest::addRow("identity-mse") << int(Activation::Identity) << int(LossKind::MeanSquaredError);
    }
    void wholePassAgreesAcrossPathsAndWithTheReference()
    {
        QFETCH(int, activation);
        QFETCH(int, loss);
        const NetworkSpec spec
            = NetworkSpec::mlp({20, 33, 17, 4}, static_cast<Activation>(activation), static_cast<LossKind>(loss));
        const ParameterLayout layout(spec);
        const Dataset data = spec.loss == LossKind::SoftmaxCrossEntropy ? makeBlobs(200, 20, 4, 1.0, 8) : [&] {
            Dataset d = makeBlobs(200, 20, 4, 1.0, 8);
            Rng rng(9);
            d.targets.resize(4, d.size());
            for (Eigen::Index i = 0; i < d.targets.size(); ++i)
                d.targets.data()[i] = static_cast<float>(rng.normal());
            d.classes = 0;
            return d;
        }();
        const SampleView<float> view = viewOf(data);
        const ParamVector params = initialParameters(spec, layout, WeightInit::Glorot, 6);
        std::vector<std::uint32_t> indices(120);
        for (std::size_t i = 0; i < indices.size(); ++i)
            indices[i] = static_cast<std::uint32_t>((i * 37) % 200);
        const int n = static_cast<int>(indices.size());
        const ChunkLayout chunks(n, 8);
        const ReductionPlan plan = ReductionPlan::build(chunks, 1, 2, 50); // two micro-batches in passes of 50

        std::vector<float> scalarGradient;
        struct Restore
        {
            ~Restore() { kernels::useKernelTableForTesting(nullptr); }
        } restore;
        for (const Path& p : paths()) {
            if (!p.supported)
                continue;
            kernels::useKernelTableForTesting(p.table); // every build, the scalar one without FMA instructions too
            NetworkWorkspace workspace(spec, 50);
            std::vector<ParamVector> buffers(static_cast<std::size_t>(plan.bufferCount), ParamVector(params.size()));
            std::vector<float*> stack;
            for (const int id : plan.workers.front().stackBuffers)
                stack.push_back(buffers[static_cast<std::size_t>(id)].data());
            for (const WorkerPass& pass : plan.workers.front().passes)
                workspace.pass(layout, params.data(), view, indices.data() + pass.samples.begin, pass.samples.size(),
                    1.0f / static_cast<float>(n), pass.program(), stack.data());
            const ParamVector& g = buffers[static_cast<std::size_t>(plan.rootBuffer)];
            if (scalarGradient.empty()) {
                scalarGradient.assign(g.begin(), g.end());
            } else {
                const QString diff = firstDifference(g.data(), scalarGradient.data(), g.size());
                QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(QString::fromLatin1(p.name), diff)));
            }
        }
        kernels::useKernelTableForTesting(nullptr);

        // the double reference
        std::vector<double> inputs(data.inputs.data(), data.inputs.data() + data.inputs.size());
        std::vector<double> targets(data.targets.data(), data.targets.data() + data.targets.size());
        SampleView<double> dv;
        dv.inputs = inputs.data();
        dv.features = 20;
        dv.count = 200;
        if (spec.loss == LossKind::SoftmaxCrossEntropy) {
            dv.labels = data.labels.data();
        } else {
            dv.targets = targets.data();
            dv.targetRows = 4;
        }
        std::vector<double> dparams(params.begin(), params.end()), reference(params.size());
        testing::ReferenceNetwork mlp(spec);
        mlp.gradient(layout, dparams.data(), dv, indices.data(), n, 1.0 / n, reference.data());
        double largest = 0;
        for (const double r : reference)
            largest = std::max(largest, std::fabs(r));
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
    }

    // The path in use can be named and forced; a path the CPU lacks is refused with a reason.
    void pathsCanBeForcedAndNamed()
    {
        struct Restore
        {
            ~Restore() { resetActiveIsa(); }
        } restore;
        setActiveIsa(Isa::Scalar);
        QCOMPARE(QString::fromLatin1(kernels::activeKernels().name), QStringLiteral("scalar"));
        QVERIFY(QString::fromStdString(kernelDescription()).contains(QStringLiteral("scalar path")));
        for (const Isa isa : {Isa::Avx2, Isa::Avx512}) {
            if (isaSupported(isa)) {
                setActiveIsa(isa);
                QCOMPARE(QString::fromLatin1(kernels::activeKernels().name), QString::fromStdString(isaName(isa)));
            } else {
                QVERIFY_THROWS_EXCEPTION(SgdError, setActiveIsa(isa));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "test_kernels.moc"
