#pragma once

#include <QCoreApplication>
#include <QPointer>
#include <QString>

class QMenu;

namespace sgdscope::ui {

class MainWindow;
class StudyView;
class SweepDialog;

/// The window's studies: File > Open study... (a study folder's charts and table in a window of their own;
/// clicking a point opens its run folder in the main window) and Run > Sweep... (a study from the panel's
/// settings, with its progress; its window opens when it ends).
class WindowStudyActions
{
    Q_DECLARE_TR_FUNCTIONS(sgdscope::ui::WindowStudyActions)
public:
    explicit WindowStudyActions(MainWindow* window)
        : m_window(window)
    {
    }

    /// Adds Open study... to the File menu and Sweep... to the Run menu.
    void addActions(QMenu* file, QMenu* run);
    /// Shows the study in `dir` in its window; returns the problem, if any.
    QString openStudy(const QString& dir);
    /// Opens Run > Sweep... for the panel's current settings.
    SweepDialog* showSweep();
    /// The study shown (the last opened), or null.
    StudyView* studyView() const;
    SweepDialog* sweepDialog() const;

private:
    MainWindow* m_window;
    QPointer<StudyView> m_view;
    QPointer<SweepDialog> m_sweep;
};

} // namespace sgdscope::ui
