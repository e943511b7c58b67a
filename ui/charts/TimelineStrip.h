#pragma once

#include "ui/SeriesStore.h"
#include "ui/charts/Exportable.h"

#include <QWidget>

namespace sgdscope::ui {

/// The last few seconds of one mode's clock, one row per worker: who computed (blue; light blue for
/// injected straggler delay), who waited (red) and who combined or applied (green). Each pixel column shows
/// the shares of the time it covers, so microsecond updates read as well as second-long ones.
class TimelineStrip : public QWidget, public Exportable
{
    Q_OBJECT
public:
    TimelineStrip(const QString& title, const QString& exportName, const ModeSeries* series, QWidget* parent = nullptr);

    void setWorkers(int workers);
    int workers() const { return m_workers; }
    QString exportName() const override { return m_exportName; }
    QImage renderImage(qreal scale) const override;
    QSize minimumSizeHint() const override { return {160, 90}; }
    QSize sizeHint() const override { return {320, 140}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

private:
    const ModeSeries* m_series;
    QString m_title;
    QString m_exportName;
    int m_workers = 1;
};

} // namespace sgdscope::ui
