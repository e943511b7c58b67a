#pragma once

#include "ui/StudyFolder.h"

#include <QList>
#include <QWidget>

class QLabel;
class QGridLayout;
class QTableWidget;

namespace sgdscope::ui {

class StudyChart;

/// A study's window (File > Open study..., `sgdscope DIR` on a study folder, the end of Run > Sweep...): what ran
/// and how far it got, its charts (hover a point for its values; click it to open that run folder in the main
/// window) and its kept points as a table (the chosen --best-of value among the columns; double-click a row to
/// open its run folder). Reload reads the folder again (a study still running, or resumed).
class StudyView : public QWidget
{
    Q_OBJECT
public:
    explicit StudyView(QWidget* parent = nullptr);

    /// Shows the study in `dir`; returns the problem (and shows nothing new) if it cannot be read.
    QString load(const QString& dir);
    const LoadedStudy& study() const { return m_study; }
    const QList<StudyChart*>& charts() const { return m_charts; }
    QTableWidget* table() const { return m_table; }

Q_SIGNALS:
    /// A point was clicked: its run folder (absolute).
    void runFolderRequested(const QString& folder);

private:
    void fillTable();

    LoadedStudy m_study;
    QLabel* m_summary;
    QWidget* m_chartArea;
    QGridLayout* m_grid;
    QTableWidget* m_table;
    QList<StudyChart*> m_charts;
};

} // namespace sgdscope::ui
