#include "ui/WindowExports.h"

#include "ui/MainWindow.h"
#include "ui/ModeColumn.h"
#include "ui/charts/AccuracyChart.h"
#include "ui/charts/LossChart.h"

#include <QDir>
#include <QFileDialog>
#include <QImage>
#include <QMessageBox>
#include <QPainter>
#include <QSettings>
#include <QStatusBar>

namespace sgdscope::ui {

QList<const Exportable*> WindowExports::exportables() const
{
    QList<const Exportable*> all;
    for (int m = 0; m < modeCount; ++m)
        all += m_window->column(m)->exportables();
    all << m_window->comparison(0) << m_window->comparison(1) << m_window->accuracyChart();
    return all;
}

QStringList WindowExports::exportCharts(const QString& folder) const
{
    QStringList problems;
    const QDir dir(folder);
    if (!dir.exists())
        return {tr("folder '%1' does not exist").arg(folder)};
    for (const Exportable* e : exportables()) {
        const QString error = savePng(e->renderImage(2.0), dir.filePath(e->exportName() + QStringLiteral(".png")));
        if (!error.isEmpty()) {
            problems << error;
            return problems; // the folder is not writable: stop at the first failure
        }
    }
    QImage window(m_window->size() * 2, QImage::Format_ARGB32_Premultiplied);
    if (window.isNull())
        return problems << savePng(window, dir.filePath(windowExportName())); // out of memory, said there
    window.setDevicePixelRatio(2.0);
    window.fill(Qt::white);
    {
        QPainter painter(&window);
        m_window->render(&painter);
    }
    const QString error = savePng(window, dir.filePath(windowExportName()));
    if (!error.isEmpty())
        problems << error;
    return problems;
}

QString WindowExports::windowExportName() const
{
    // sync | async keeps the name README gives; other pairs are named after their modes, as the charts are.
    const QString left = m_window->column(LeftColumn)->shownMode();
    const QString right = m_window->column(RightColumn)->shownMode();
    if (left == QStringLiteral("sync") && right == QStringLiteral("async"))
        return QStringLiteral("window.png");
    return left + QStringLiteral("-vs-") + right + QStringLiteral("-window.png");
}

void WindowExports::exportWithDialog() const
{
    const QString folder = QFileDialog::getExistingDirectory(m_window, tr("Export charts to folder"),
        QSettings().value(QStringLiteral("exportFolder"), QDir::homePath()).toString());
    if (folder.isEmpty())
        return;
    QSettings().setValue(QStringLiteral("exportFolder"), folder);
    const QStringList problems = exportCharts(folder);
    if (!problems.isEmpty())
        QMessageBox::warning(m_window, tr("Export charts"),
            tr("The charts could not be exported: %1").arg(problems.join(QLatin1Char('\n'))));
    else
        m_window->statusBar()->showMessage(
            tr("Exported %1 charts and %2 to %3").arg(exportables().size()).arg(windowExportName(), folder), 5000);
}

} // namespace sgdscope::ui
