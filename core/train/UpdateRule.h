#pragma once

#include "core/train/TrainerSettings.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sgdscope {

/// SGD with momentum, as torch.optim.SGD: v = m v + g (v starts at 0), then w = w - lr v; with m = 0 simply
/// w = w - lr g. Every engine and mode applies updates through this one object (as ensmallen's update
/// policies, e.g. MomentumUpdate, and tiny-dnn's optimizers are applied), on element ranges so that sync
/// can split an update over its workers. Element loops are compiled without FMA contraction, so a value
/// comes out the same bits whatever range it falls in.
class MomentumSgd
{
public:
    explicit MomentumSgd(double momentum)
        : m_momentum(static_cast<float>(momentum))
    {
    }

    bool hasMomentum() const { return m_momentum != 0.0f; }

    /// The step for elements [first, last): the gradient itself without momentum; with momentum, updates
    /// the velocity v = m v + g there and returns v.
    const float* direction(const float* gradient, float* velocity, std::size_t first, std::size_t last) const;

    /// w = w - lr step on [first, last).
    static void apply(float* params, const float* step, float lr, std::size_t first, std::size_t last);

    /// The same without a lock, element by element with relaxed atomic loads and stores (HOGWILD!, Niu et al.
    /// 2011): concurrent updates may interleave, but there is no data race.
    static void applyRelaxed(float* params, const float* step, float lr, std::size_t first, std::size_t last);

    /// direction() and apply() in one pass over [first, last) (sync's combine step).
    void update(
        float* params, float* velocity, const float* gradient, float lr, std::size_t first, std::size_t last) const;

private:
    float m_momentum;
};

/// The learning rate of every update, for `learningRate` given per batch of `batch` samples, after `samplesDone` of the
/// run's samples were applied: the schedule's rate (LrSchedule: constant, or linear over the run's sample budget).
/// Sync, backup and local SGD apply it to the mean gradient of a batch. A push applied on its own (async, ssp, dc-asgd)
/// takes, by default, the scheduled rate x b / B for a push of b samples, so that a push takes sync's step per sample
/// (sync applies lr to the mean gradient of B samples; a push is the mean gradient of its b); constant: the scheduled
/// rate, what each push took before (P times sync's step per sample at P workers); staleness: rate x b / B /
/// max(1, staleness) (Zhang, Gupta, Lian, Liu 2016, "Staleness-aware Async-SGD for Distributed Deep Learning").
class LearningRateRule
{
public:
    explicit LearningRateRule(const TrainerSettings& settings)
        : m_learningRate(settings.learningRate)
        , m_policy(settings.asyncLearningRate)
        , m_batch(settings.batch)
        , m_schedule(settings.lrSchedule)
        , m_budget(settings.sampleBudget)
    {
    }
    /// The rate of an update of a whole batch (sync, backup, a local step) applied after `samplesDone` samples.
    float ofBatch(std::int64_t samplesDone) const { return static_cast<float>(scheduled(samplesDone)); }
    /// The same in double precision, as given (the rate an update records).
    double scheduled(std::int64_t samplesDone) const;
    /// The rate of a push of `samples` samples applied `staleness` updates after its parameters were read, after
    /// `samplesDone` samples.
    float ofPush(std::int64_t staleness, int samples, std::int64_t samplesDone) const;

private:
    double m_learningRate;
    AsyncLearningRate m_policy;
    int m_batch;
    LrSchedule m_schedule;
    std::int64_t m_budget;
};

/// Delay compensation (DC-ASGD: Zheng, Meng, Wang, Chen, Yu, Ma, Liu 2017, "Asynchronous Stochastic Gradient
/// Descent with Delay Compensation"): a gradient g computed at the parameters w_read and applied at w_now is
/// corrected by the diagonal of its outer product, an approximation of the Hessian:
/// g + lambda g*g*(w_now - w_read), element by element. DC-ASGD-a (adaptive) divides lambda, element by element,
/// by sqrt(ms + 1e-7), ms a moving average (0.95) of g*g over the pushes applied, updated before it is used. One
/// object per parameter server: it keeps ms. lambda = 0 leaves the gradient untouched (the push is async's).
class DelayCompensation
{
public:
    DelayCompensation(double lambda, bool adaptive, std::size_t size);
    bool active() const { return m_lambda != 0.0f; }
    /// A new lambda from the next push on (the window's live change; the adaptive mean square carries on, and
    /// starts at 0 if lambda was 0 until now). Not during compensate(): its owner calls it between runs.
    void setLambda(double lambda);
    /// Compensates `gradient` in place; returns |compensation| / |gradient| (Euclidean norms; 0 for a zero
    /// gradient).
    double compensate(float* gradient, const float* now, const float* read, std::size_t size);

    static constexpr float meanSquareDecay = 0.95f;
    static constexpr float epsilon = 1e-7f;

private:
    float m_lambda;
    bool m_adaptive;
    std::size_t m_size;
    std::vector<float> m_meanSquare;
};

/// What applying a push did, for its event (UpdateEvent::compensation and learningRate).
struct AppliedPush
{
    double compensation = -1.0; // dc-asgd: |compensation| / |gradient| (< 0: not compensated)
    float learningRate = 0.0f;
};

/// A push applied on its own (async, ssp, dc-asgd), the same on every engine (Downpour SGD's parameter server, Dean
/// et al. 2012; with DC-ASGD's delay compensation): the push's gradient compensated for its delay against the
/// parameters it is applied to (DelayCompensation), the worker's own momentum (MomentumSgd), and the learning rate
/// for its samples and staleness (LearningRateRule): w = w - lr step. An engine applies each push through this under
/// its own exclusion (the threads engine's lock, the simulated server's one actor, the MPI server rank).
class PushRule
{
public:
    /// `compensation`: the engine's one (dc-asgd's mean squares live there; lambda 0 for the other modes).
    PushRule(const TrainerSettings& settings, DelayCompensation& compensation)
        : m_rule(settings.momentum)
        , m_rate(settings)
        , m_compensation(compensation)
    {
    }
    /// Whether apply() compensates the gradient. If not, the step depends on the worker's gradient and momentum alone:
    /// an engine may take it earlier (step()), outside its exclusion.
    bool compensates() const { return m_compensation.active(); }
    /// The momentum direction of a push that is not compensated (updates `velocity`).
    const float* step(const float* gradient, float* velocity, std::size_t size) const
    {
        return m_rule.direction(gradient, velocity, 0, size);
    }
    /// The learning rate of a push of `samples` samples applied `staleness` updates after its parameters were read,
    /// after `samplesDone` samples of the run were applied.
    float learningRate(std::int64_t staleness, int samples, std::int64_t samplesDone) const
    {
        return m_rate.ofPush(staleness, samples, samplesDone);
    }
    /// Applies a push of `samples` samples to `params` (`size` floats), `staleness` updates after its worker read
    /// `read` (needed only if it compensates) and `samplesDone` samples into the run: compensates `gradient` in place
    /// against `params` (dc-asgd), takes the momentum direction with `velocity` (or `step`, taken earlier by step(),
    /// if it does not compensate) and subtracts lr x step.
    AppliedPush apply(float* params, float* gradient, float* velocity, const float* read, std::size_t size,
        std::int64_t staleness, int samples, std::int64_t samplesDone, const float* step = nullptr) const;

private:
    MomentumSgd m_rule;
    LearningRateRule m_rate;
    DelayCompensation& m_compensation;
};

} // namespace sgdscope
