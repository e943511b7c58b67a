#pragma once

#include "ui/charts/Exportable.h"

#include <QChartView>

class QAbstractAxis;
class QValueAxis;

namespace sgdscope::ui {

/// A compact QChartView with our look, a title, a one-sentence tooltip and the export menu.
class ChartPanel : public QChartView, public Exportable
{
    Q_OBJECT
public:
    ChartPanel(const QString& title, const QString& exportName, QWidget* parent = nullptr);

    QString exportName() const override { return m_exportName; }
    /// A new title and file stem (a column that shows another mode).
    void setTitle(const QString& title);
    void setExportName(const QString& name) { m_exportName = name; }
    QString title() const;
    QImage renderImage(qreal scale) const override;
    QChart* chartItem() const { return m_chart; }
    /// Width of the plot area in pixels: how many columns the data is decimated to.
    int plotColumns() const;

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    /// Small charts (a 1024x700 window) drop their legend and axis titles, keeping the plot readable; the
    /// colours are the same everywhere and every chart has a tooltip.
    void resizeEvent(QResizeEvent* event) override;
    static void styleAxis(QAbstractAxis* axis, const QString& title);
    /// Sets [0, max] with ticks at round numbers (1, 2 or 5 times a power of ten) from 0.
    static void setRoundTicks(QValueAxis* axis, double max);

    QChart* m_chart;

private:
    QString m_exportName;
};

} // namespace sgdscope::ui
