#pragma once

#include "ui/SessionData.h"
#include "ui/charts/ChartPanel.h"

class QBarSet;
class QBarCategoryAxis;
class QValueAxis;

namespace sgdscope::ui {

/// Per current worker, how its time was spent since the run began or the last configuration change:
/// computing (busy, including injected straggler delay), waiting (idle: for the slowest worker in sync; for
/// the lock or at a slice's end in async), combining/applying, and copying parameters, each as a share of
/// that worker's wall time over the same stretch. What no measured span covers is left blank at the top.
/// Beyond 32 workers the chart shows the distribution over workers instead (quantiles of idle time).
class WorkerBarsChart : public ChartPanel
{
    Q_OBJECT
public:
    WorkerBarsChart(const QString& title, const QString& exportName, QWidget* parent = nullptr);
    /// `since`: the mode's clock at the last configuration change (0: the run's start).
    void setWorkers(const std::vector<WorkerTime>& workers, double since = 0.0);
    /// Bars shown: one per worker, or the 11 quantiles of a distribution when there are more than this.
    static constexpr int maxWorkerBars = 32;
    int workerCount() const { return m_count; }
    bool showsDistribution() const { return m_distribution; }
    QString valueAxisTitle() const;
    /// What hovering bar `bar` says: its worker, busy and idle shares, its own waits and the waits it caused.
    QString barText(int bar) const;

private:
    QBarSet* m_busy;
    QBarSet* m_idle;
    QBarSet* m_apply;
    QBarSet* m_transfer;
    QBarSet* m_unaccounted;
    QBarCategoryAxis* m_categories;
    QValueAxis* m_value;
    int m_count = 0;
    bool m_distribution = false;
    double m_since = -1.0;
    std::vector<WorkerTime> m_shown; // the bars' workers, for the hover text
    QString m_chartToolTip; // the chart's own tooltip while a bar's replaces it (null: none replaced)
};

} // namespace sgdscope::ui
