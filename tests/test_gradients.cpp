// Analytic gradients against central finite differences, in double, for every activation and loss and for every
// kind of layer (dense, convolution with strides and padding, max and average pooling, flatten): the reference
// network (ReferenceNetwork.h) that the float kernels are checked against elsewhere.
#include "ReferenceNetwork.h"
#include "core/common/Rng.h"
#include "core/nn/ModelText.h"

#include <QTest>

#include <cmath>
#include <numeric>

using namespace sgdscope;

namespace {
// Central differences with step h have O(h^2) truncation and O(eps/h) rounding error; with h = 1e-5 on
// values of order 1 both are far below this relative tolerance, while a wrong derivative is off by O(1).
constexpr double kGradientTolerance = 1e-6;
constexpr double kStep = 1e-5;

struct Problem
{
    NetworkSpec spec;
    ParameterLayout layout;
    std::vector<double> inputs; // features x n, column-major
    std::vector<double> targets;
    std::vector<std::int32_t> labels;
    int n = 0;
};

Problem makeProblem(NetworkSpec spec, std::uint64_t seed)
{
    Problem p;
    p.spec = std::move(spec);
    p.spec.check();
    p.layout = ParameterLayout(p.spec);
    p.n = 6;
    Rng rng(seed);
    const int features = p.spec.inputs();
    const int outputs = p.spec.outputs();
    for (int i = 0; i < features * p.n; ++i)
        p.inputs.push_back(rng.normal());
    for (int i = 0; i < outputs * p.n; ++i)
        p.targets.push_back(rng.normal());
    for (int i = 0; i < p.n; ++i)
        p.labels.push_back(static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(outputs))));
    return p;
}

Problem makeMlp(Activation activation, LossKind loss, std::uint64_t seed)
{
    return makeProblem(NetworkSpec::mlp({3, 7, 5, 4}, activation, loss), seed);
}

SampleView<double> view(const Problem& p)
{
    SampleView<double> v;
    v.inputs = p.inputs.data();
    v.features = p.spec.inputs();
    v.count = p.n;
    if (p.spec.loss == LossKind::MeanSquaredError) {
        v.targets = p.targets.data();
        v.targetRows = p.spec.outputs();
    } else {
        v.labels = p.labels.data();
    }
    return v;
}

/// Every parameter's analytic derivative of the mean loss against a central difference; fails naming the first
/// that differs. Returns how many were checked.
int checkAgainstFiniteDifferences(const Problem& p)
{
    std::vector<double> params(p.layout.paddedSize(), 0.0);
    Rng rng(7);
    for (const auto& t : p.layout.tensors()) {
        for (std::size_t i = 0; i < t.size; ++i)
            params[t.offset + i] = 0.8 * rng.normal();
    }
    testing::ReferenceNetwork ws(p.spec);
    std::vector<std::uint32_t> indices(static_cast<std::size_t>(p.n));
    std::iota(indices.begin(), indices.end(), 0U);
    const SampleView<double> data = view(p);
    const double scale = 1.0 / p.n;
    std::vector<double> grad(params.size(), 0.0);
    ws.gradient(p.layout, params.data(), data, indices.data(), p.n, scale, grad.data());

    auto meanLoss = [&](const std::vector<double>& at) {
        std::vector<double> scratch(at.size(), 0.0);
        return ws.gradient(p.layout, at.data(), data, indices.data(), p.n, scale, scratch.data()) / p.n;
    };
    int checked = 0;
    for (const auto& t : p.layout.tensors()) {
        for (std::size_t i = 0; i < t.size; ++i) {
            const std::size_t k = t.offset + i;
            std::vector<double> plus = params, minus = params;
            plus[k] += kStep;
            minus[k] -= kStep;
            const double numeric = (meanLoss(plus) - meanLoss(minus)) / (2 * kStep);
            const double error = std::fabs(numeric - grad[k]) / std::max(1.0, std::fabs(numeric));
            if (error > kGradientTolerance) {
                QTest::qFail(qPrintable(QStringLiteral("%1[%2]: analytic %3, finite difference %4")
                                            .arg(QString::fromStdString(t.name))
                                            .arg(i)
                                            .arg(grad[k], 0, 'g', 12)
                                            .arg(numeric, 0, 'g', 12)),
                    __FILE__, __LINE__);
                return -1;
            }
            ++checked;
        }
    }
    return checked;
}
} // namespace

class TestGradients : public QObject
{
    Q_OBJECT
private slots:
    void matchesFiniteDifferences_data()
    {
        QTest::addColumn<int>("activation");
        QTest::addColumn<int>("loss");
        const std::pair<const char*, Activation> activations[] = {{"tanh", Activation::Tanh},
            {"relu", Activation::Relu}, {"sigmoid", Activation::Sigmoid}, {"identity", Activation::Identity}};
        const std::pair<const char*, LossKind> losses[]
            = {{"mse", LossKind::MeanSquaredError}, {"cross-entropy", LossKind::SoftmaxCrossEntropy}};
        for (const auto& [an, a] : activations) {
            for (const auto& [ln, l] : losses)
                QTest::addRow("%s-%s", an, ln) << static_cast<int>(a) << static_cast<int>(l);
        }
    }

    void matchesFiniteDifferences()
    {
        QFETCH(int, activation);
        QFETCH(int, loss);
        const Problem p = makeMlp(static_cast<Activation>(activation), static_cast<LossKind>(loss), 42);
        QCOMPARE(checkAgainstFiniteDifferences(p), static_cast<int>(p.layout.parameterCount()));
    }

    // Convolutions (strides, paddings, rectangular kernels, several channels), max and average pooling, flatten,
    // with every activation and both losses.
    void convolutionalNetworksMatchFiniteDifferences_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("height");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("activation");
        QTest::addColumn<int>("loss");
        auto row = [](const char* name, const char* model, int c, int h, int w, Activation a, LossKind l) {
            QTest::addRow("%s", name) << QString::fromLatin1(model) << c << h << w << static_cast<int>(a)
                                      << static_cast<int>(l);
        };
        row("lenet-like tanh ce", "conv3x3x3p1,maxpool2,conv4x3x3,dense5,dense3", 1, 8, 8, Activation::Tanh,
            LossKind::SoftmaxCrossEntropy);
        row("stride and padding sigmoid mse", "conv3x3x2s2p1,avgpool2,dense2", 2, 7, 7, Activation::Sigmoid,
            LossKind::MeanSquaredError);
        row("relu max pools", "conv4x2x2,relu,maxpool3,flatten,dense3", 2, 7, 7, Activation::Relu,
            LossKind::SoftmaxCrossEntropy);
        row("identity avg pool rectangles", "conv2x3x2p1,avgpool2x3,conv3x1x1,dense4", 3, 6, 8, Activation::Identity,
            LossKind::MeanSquaredError);
        row("conv to logits", "input2x5x5,conv3x5x5", 1, 1, 50, Activation::Tanh, LossKind::SoftmaxCrossEntropy);
    }
    void convolutionalNetworksMatchFiniteDifferences()
    {
        QFETCH(QString, model);
        QFETCH(int, channels);
        QFETCH(int, height);
        QFETCH(int, width);
        QFETCH(int, activation);
        QFETCH(int, loss);
        const TensorShape data
            = height == 1 ? TensorShape::vector(channels * width) : TensorShape::image(channels, height, width);
        const Problem p = makeProblem(networkFromModel(parseModelText(model.toStdString()), data,
                                          static_cast<Activation>(activation), static_cast<LossKind>(loss)),
            11);
        QCOMPARE(checkAgainstFiniteDifferences(p), static_cast<int>(p.layout.parameterCount()));
    }

    // The loss values themselves, against direct formulas.
    void lossValues()
    {
        NetworkSpec spec = NetworkSpec::mlp({1, 2}, Activation::Identity, LossKind::SoftmaxCrossEntropy);
        const ParameterLayout layout(spec);
        std::vector<double> params(layout.paddedSize(), 0.0);
        params[layout.weight(0).offset + 0] = 1.0; // z0 = x
        params[layout.weight(0).offset + 1] = -1.0; // z1 = -x
        const std::vector<double> x = {0.5};
        const std::vector<std::int32_t> label = {1};
        SampleView<double> v;
        v.inputs = x.data();
        v.features = 1;
        v.labels = label.data();
        v.count = 1;
        testing::ReferenceNetwork ws(spec);
        const EvalSums sums = ws.evaluate(layout, params.data(), v, 0, 1);
        const double expected = std::log(std::exp(0.5) + std::exp(-0.5)) + 0.5;
        QVERIFY(std::fabs(sums.lossSum - expected) < 1e-12);
        QCOMPARE(sums.correct, std::int64_t(0)); // the argmax is class 0, the label 1

        spec.loss = LossKind::MeanSquaredError;
        const std::vector<double> y = {1.0, 2.0};
        SampleView<double> r;
        r.inputs = x.data();
        r.features = 1;
        r.targets = y.data();
        r.targetRows = 2;
        r.count = 1;
        testing::ReferenceNetwork ws2(spec);
        const EvalSums mse = ws2.evaluate(layout, params.data(), r, 0, 1);
        // outputs (0.5, -0.5); sum over outputs of squares: 0.25 + 6.25
        QVERIFY(std::fabs(mse.lossSum - 6.5) < 1e-12);
    }
};

QTEST_GUILESS_MAIN(TestGradients)
#include "test_gradients.moc"
