#include "core/metrics/RunRecorder.h"

#include <cmath>

namespace sgdscope {

RunRecorder::RunRecorder(std::size_t capacity, std::size_t spanCapacity)
    : m_spanCapacity(spanCapacity)
    , m_updates(capacity)
    , m_evaluations(capacity)
{
}

void RunRecorder::onWorkerTime(const WorkWindow&, std::span<const Span> spans)
{
    if (m_spanCapacity == 0)
        return;
    if (m_spans.size() + spans.size() <= m_spanCapacity)
        m_spans.insert(m_spans.end(), spans.begin(), spans.end());
    else
        m_spansTruncated = true;
}

void RunRecorder::onUpdate(const UpdateEvent& u, const UpdateFigures& f)
{
    // A non-finite loss (divergence) is always kept.
    m_updates.push(pointOf(u, f), !std::isfinite(u.batchLoss));
}

RunRecorder::UpdatePoint RunRecorder::pointOf(const UpdateEvent& u, const UpdateFigures& f)
{
    return {u.index, u.samplesSeen, u.seconds, u.batchLoss, f.staleness, f.waitSeconds, u.worker, u.learningRate};
}

void RunRecorder::onEvaluation(const EvaluationRecord& e)
{
    m_evaluations.push(e);
}

} // namespace sgdscope
