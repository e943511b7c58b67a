#pragma once
// Small problems and an independent reference trainer shared by the core tests.

#include "ReferenceNetwork.h"
#include "core/data/DataOrder.h"
#include "core/data/Dataset.h"
#include "core/data/GeneratedData.h"
#include "core/nn/Initialization.h"
#include "core/nn/ModelText.h"
#include "core/train/Problem.h"
#include "core/train/TrainerSettings.h"

#include <cstring>
#include <memory>
#include <vector>

namespace sgdscope::testing {

/// A classification problem big enough to have many chunks and several layers: 8 features, 3 classes.
inline std::shared_ptr<Problem> blobsProblem(
    std::int64_t samples = 240, Activation activation = Activation::Tanh, std::vector<int> layers = {8, 16, 12, 3})
{
    auto data = std::make_shared<DataSplit>();
    data->train = makeBlobs(samples, 8, 3, 1.0, 11);
    auto p = std::make_shared<Problem>();
    p->spec = NetworkSpec::mlp(layers, activation, LossKind::SoftmaxCrossEntropy);
    p->layout = ParameterLayout(p->spec);
    p->data = data;
    p->initialParameters = initialParameters(p->spec, p->layout, WeightInit::Glorot, 5);
    return p;
}

/// A small convolutional network on blobs of 64 features read as 8 x 8 images, 10 classes: two convolutions (one
/// padded), a max pool, ReLU, a dense output layer.
inline std::shared_ptr<Problem> convProblem(std::int64_t samples = 240)
{
    auto data = std::make_shared<DataSplit>();
    data->train = makeBlobs(samples, 64, 10, 1.0, 13);
    auto p = std::make_shared<Problem>();
    p->spec = networkFromModel(parseModelText("input1x8x8,conv4x3x3p1,maxpool2,conv6x3x3,dense10"),
        TensorShape::vector(64), Activation::Relu, LossKind::SoftmaxCrossEntropy);
    p->spec.check();
    p->layout = ParameterLayout(p->spec);
    p->data = data;
    p->initialParameters = initialParameters(p->spec, p->layout, WeightInit::He, 5);
    return p;
}

inline std::shared_ptr<Problem> parabolaProblem(std::int64_t points = 50)
{
    auto data = std::make_shared<DataSplit>();
    data->train = makeParabola(points);
    auto p = std::make_shared<Problem>();
    p->spec = NetworkSpec::mlp({1, 5, 1}, Activation::Tanh, LossKind::MeanSquaredError);
    p->layout = ParameterLayout(p->spec);
    p->data = data;
    p->initialParameters = initialParameters(p->spec, p->layout, WeightInit::StandardNormal, 0);
    return p;
}

/// Sequential large-batch gradient descent in double precision, written independently of the trainers:
/// per-sample gradients one at a time, their plain mean over the batch, then the SGD step
/// (v = m v + g, w = w - lr v). Same data order as the trainers (DataOrder).
class ReferenceGd
{
public:
    ReferenceGd(const Problem& problem, const TrainerSettings& settings)
        : m_problem(problem)
        , m_settings(settings)
        , m_order(problem.train().size(), settings.seed)
        , m_cursor(m_order)
        , m_workspace(problem.spec)
    {
        const Dataset& d = problem.train();
        m_inputs.assign(d.inputs.data(), d.inputs.data() + d.inputs.size());
        if (d.isClassification())
            m_labels = d.labels;
        else
            m_targets.assign(d.targets.data(), d.targets.data() + d.targets.size());
        m_params.assign(problem.initialParameters.begin(), problem.initialParameters.end());
        m_velocity.assign(m_params.size(), 0.0);
    }

    /// The mean gradient of the next batch (advances the data order).
    std::vector<double> nextBatchGradient(std::vector<std::uint32_t>* batchOut = nullptr)
    {
        const std::uint32_t* idx = m_cursor.next(m_settings.batch);
        if (batchOut)
            batchOut->assign(idx, idx + m_settings.batch);
        return meanGradient(idx, m_settings.batch);
    }

    std::vector<double> meanGradient(const std::uint32_t* idx, int count)
    {
        std::vector<double> sum(m_params.size(), 0.0), one(m_params.size(), 0.0);
        for (int i = 0; i < count; ++i) {
            m_workspace.gradient(m_problem.layout, m_params.data(), view(), idx + i, 1, 1.0, one.data());
            for (std::size_t k = 0; k < sum.size(); ++k)
                sum[k] += one[k];
        }
        for (auto& g : sum)
            g /= count;
        return sum;
    }

    void apply(const std::vector<double>& g)
    {
        for (std::size_t k = 0; k < m_params.size(); ++k) {
            m_velocity[k] = m_settings.momentum * m_velocity[k] + g[k];
            m_params[k] -= m_settings.learningRate * m_velocity[k];
        }
    }

    void step() { apply(nextBatchGradient()); }
    const std::vector<double>& params() const { return m_params; }

private:
    SampleView<double> view() const
    {
        SampleView<double> v;
        v.inputs = m_inputs.data();
        v.features = m_problem.train().features();
        v.count = m_problem.train().size();
        if (m_problem.train().isClassification()) {
            v.labels = m_labels.data();
        } else {
            v.targets = m_targets.data();
            v.targetRows = static_cast<int>(m_problem.train().targets.rows());
        }
        return v;
    }

    const Problem& m_problem;
    TrainerSettings m_settings;
    DataOrder m_order;
    BatchCursor m_cursor;
    ReferenceNetwork m_workspace;
    std::vector<double> m_inputs, m_targets, m_params, m_velocity;
    std::vector<std::int32_t> m_labels;
};

inline bool sameBits(const ParamVector& a, const ParamVector& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Largest |a - b| / max(1, |b|) over the parameters.
template<typename A, typename B>
double maxRelativeDifference(const A& a, const B& b)
{
    double worst = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const double d = std::fabs(static_cast<double>(a[k]) - static_cast<double>(b[k]))
            / std::max(1.0, std::fabs(static_cast<double>(b[k])));
        worst = std::max(worst, d);
    }
    return worst;
}

} // namespace sgdscope::testing
