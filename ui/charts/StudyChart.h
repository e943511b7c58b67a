#pragma once

#include "core/run/study/StudyFigures.h"
#include "ui/charts/ChartPanel.h"

#include <QStringList>

#include <vector>

class QLineSeries;

namespace sgdscope::ui {

/// One chart of a study (core/run/study/StudyFigures.h): a line per combination of the other axes in its
/// mode's colour (a second line of the same mode lighter and dashed), each x's seeds as a band from the smallest
/// to the largest value under a line through the medians, logarithmic axes where the figure asks. Hovering a
/// point shows its values; clicking it emits pointClicked with the median run's folder (relative to the study's
/// folder).
class StudyChart : public ChartPanel
{
    Q_OBJECT
public:
    explicit StudyChart(StudyFigure figure, QWidget* parent = nullptr);

    const StudyFigure& figure() const { return m_figure; }
    /// The text shown when hovering the point of `line` nearest to `x` ("sync · workers 8: ...").
    QString describePoint(int line, double x) const;
    /// The folder of the point of `line` nearest to `x` (its median run), relative to the study folder.
    QString folderAt(int line, double x) const;

Q_SIGNALS:
    void pointClicked(const QString& folder);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    /// The title with the figure's note under it, the note's lines wrapped to the chart's width.
    void showTitle();
    const FigurePoint* nearest(int line, double x) const;
    void buildAxes();

    StudyFigure m_figure;
};

/// Writes every figure as a PNG at twice the pixel density into `dir` (each atomically). Returns the problems.
/// Needs a QApplication.
QStringList writeStudyCharts(const QString& dir, const std::vector<StudyFigure>& figures);

} // namespace sgdscope::ui
