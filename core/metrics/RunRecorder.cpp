#include "core/metrics/RunRecorder.h"

#include <cmath>

namespace sgdscope {

RunRecorder::RunRecorder(std::size_t capacity, std::size_t spanCapacity)
    : m_spanCapacity(spanCapacity)
    , m_updates(capacity)
    , m_evaluations(capacity)
{
}

void RunRecorder::onUpdate(const UpdateRecord& u, std::span<const WorkerSpan> workers)
{
    // A non-finite loss (divergence) is always kept.
    m_updates.push({u.index, u.samples, u.seconds, u.batchLoss, u.staleness, u.worker}, !std::isfinite(u.batchLoss));
    if (m_spanCapacity > 0) {
        if (m_spans.size() + workers.size() <= m_spanCapacity)
            m_spans.insert(m_spans.end(), workers.begin(), workers.end());
        else
            m_spansTruncated = true;
    }
}

void RunRecorder::onEvaluation(const EvaluationRecord& e)
{
    m_evaluations.push(e);
}

} // namespace sgdscope
