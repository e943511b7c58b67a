#pragma once

#include "ui/SessionData.h"
#include "ui/charts/ChartPanel.h"

class QBarSet;
class QBarCategoryAxis;
class QValueAxis;

namespace sgdscope::ui {

/// Per worker, how its time was spent since the run began: computing (busy), waiting (idle: for the
/// slowest worker in sync, for the lock or a snapshot in async) and combining/applying, as shares of the
/// mode's wall time.
class WorkerBarsChart : public ChartPanel
{
    Q_OBJECT
public:
    WorkerBarsChart(const QString& title, const QString& exportName, QWidget* parent = nullptr);
    void setWorkers(const std::vector<WorkerTime>& workers);
    int workerCount() const { return m_count; }

private:
    QBarSet* m_busy;
    QBarSet* m_idle;
    QBarSet* m_apply;
    QBarCategoryAxis* m_categories;
    QValueAxis* m_value;
    int m_count = 0;
};

} // namespace sgdscope::ui
