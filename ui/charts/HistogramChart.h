#pragma once

#include "ui/charts/ChartPanel.h"

#include <QStringList>

#include <cstdint>
#include <vector>

class QBarSet;
class QBarCategoryAxis;
class QValueAxis;

namespace sgdscope::ui {

/// A distribution as bars of their share of the total: async's staleness, sync's wait per update.
class HistogramChart : public ChartPanel
{
    Q_OBJECT
public:
    HistogramChart(const QString& title, const QString& exportName, const QColor& color, const QString& xTitle,
        const QString& what, QWidget* parent = nullptr);
    /// One bar per label; counts of the same length.
    void setBins(const QStringList& labels, const std::vector<std::int64_t>& counts);
    QStringList labels() const;
    /// Whether `labels`, one per bar, are each narrower than their bar's share of the plot (else Qt elides them).
    bool labelsFit(const QStringList& labels) const;
    /// The bars' heights, in % of the total (tests).
    std::vector<double> shares() const;

private:
    QBarSet* m_set;
    QBarCategoryAxis* m_categories;
    QValueAxis* m_value;
    QStringList m_labels;
};

} // namespace sgdscope::ui
