#pragma once

#include <QCoreApplication>
#include <QList>
#include <QStringList>

namespace sgdscope::ui {

class Exportable;
class MainWindow;

/// The window's PNG exports (File > Export charts...): every chart and the whole window, named after the modes
/// the columns show. Reads the window through its public face only; MainWindow's functions of the same names
/// say what each does.
class WindowExports
{
    Q_DECLARE_TR_FUNCTIONS(sgdscope::ui::WindowExports)
public:
    explicit WindowExports(MainWindow* window)
        : m_window(window)
    {
    }

    QList<const Exportable*> exportables() const;
    QStringList exportCharts(const QString& folder) const;
    QString windowExportName() const;
    /// File > Export charts...: asks for a folder (remembered as exportFolder), exports there and says how it went.
    void exportWithDialog() const;

private:
    MainWindow* m_window;
};

} // namespace sgdscope::ui
