#pragma once

#include <QCoreApplication>
#include <QStringList>

class QDragEnterEvent;
class QDropEvent;
class QMenu;

namespace sgdscope::ui {

class MainWindow;

/// The window's files: File > Open run..., Open data..., Open recent and Save run as..., and a path dropped on the
/// window. It reads and writes them; the window shows what was opened (MainWindow::showRunFolder and
/// adoptOpenedData). MainWindow's functions of the same names say what each does.
class WindowFileActions
{
    Q_DECLARE_TR_FUNCTIONS(sgdscope::ui::WindowFileActions)
public:
    explicit WindowFileActions(MainWindow* window)
        : m_window(window)
    {
    }

    /// Adds Open run..., Open data (CSV file, IDX folder)..., Open recent and Save run as... to the File menu.
    void addActions(QMenu* file);
    QString openRun(const QString& folder);
    QString openData(const QString& path);
    QString openPath(const QString& path);
    QString saveRun(const QString& folder);
    static QStringList recentPaths();
    /// One local path dragged on the window is taken; dropped, it is opened as openPath does.
    static void dragEnter(QDragEnterEvent* event);
    void drop(QDropEvent* event);

private:
    static void addRecent(const QString& path);
    void fillRecentMenu();
    /// Opening a run folder ends a run in progress: asks first (drops and Open recent).
    bool mayReplaceTheRun(const QString& path);

    MainWindow* m_window;
    QMenu* m_recentMenu = nullptr;
};

} // namespace sgdscope::ui
