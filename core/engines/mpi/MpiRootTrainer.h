#pragma once

#include "core/engines/Trainer.h"
#include "core/engines/mpi/MpiContext.h"
#include "core/engines/mpi/RankReport.h"
#include "core/metrics/WindowCutter.h"

#include <memory>

namespace sgdscope {

/// What rank 0's trainer shares in every MPI mode: the job (MpiContext), the cutter that puts the other ranks'
/// spans, which arrive with their next message, into the mode's windows in order, and the check that the job has
/// the processes the mode needs. The other ranks run the mode's serve function.
class MpiRootTrainer : public Trainer
{
public:
    ~MpiRootTrainer() override;
    const char* engineName() const override { return "mpi"; }
    /// Hands on every window closed so far, with whatever spans of the other ranks arrived for it (those of a rank
    /// that failed never will); a mode whose window was still open closes it first (closeOpenWindow).
    void reportUntilFailure(TrainingObserver& observer) override;

protected:
    MpiRootTrainer(std::shared_ptr<const Problem> problem, TrainerSettings settings, Mode mode);

    /// Throws SgdError naming --workers unless the job has the processes the settings' workers need in this mode:
    /// one each, and a parameter server's in the modes that have one (mpiWorkersFor).
    void requireProcesses() const;
    /// Closes the window under way when a failure ended it (async's slice of pushes), with the updates counted in
    /// it; the modes whose windows are one update each have none open.
    virtual void closeOpenWindow() { }

    /// One update as a window of its own, from `windowStart` (rank 0's clock; `shift` takes it to the mode's) to
    /// when `apply` returned. What allocates comes first (the window and its room in the cutter; with `own`, room
    /// for rank 0's spans of the update and its Apply span), so that once `apply()` has changed the parameters the
    /// update is counted and in the cutter with its spans, whatever runs out of memory after it.
    /// `event(seconds)` counts the update and returns its event, at the window's end on the mode's clock. `own`:
    /// rank 0's spans of the update when it is a worker too (sync, local-sgd), null for a server (backup).
    template<class Apply, class Event>
    void applyInItsWindow(double windowStart, double shift, int workers, RankSpans* own, Apply&& apply, Event&& event)
    {
        WindowCutter::Closed closed {WorkWindow {windowStart, windowStart, workers}, shift, {UpdateEvent {}}};
        m_cutter.makeRoom();
        if (own) {
            own->spans.reserve(own->spans.size() + 1);
            m_cutter.makeRoomForSpans(0, own->spans.size() + 1);
        }
        const double applyStart = MpiContext::now();
        apply();
        const double windowEnd = MpiContext::now();
        closed.window.end = windowEnd;
        closed.updates[0] = event(windowEnd + shift);
        m_seconds += windowEnd - windowStart;
        m_cutter.close(std::move(closed));
        if (own) {
            own->add(SpanKind::Apply, applyStart, windowEnd);
            for (const Span& s : own->spans)
                m_cutter.add(s);
            m_cutter.knownUntil(0, windowEnd);
        }
    }

    MpiContext& m_mpi;
    WindowCutter m_cutter;
    CoreTimeSince m_coreTime; // rank 0's threads since the mode began
};

} // namespace sgdscope
