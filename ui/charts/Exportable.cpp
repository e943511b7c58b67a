#include "ui/charts/Exportable.h"

#include "core/common/Error.h"
#include "core/io/Files.h"

#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QColor>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QWidget>

namespace sgdscope::ui {

QString savePng(const QImage& image, const QString& path)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    // Opaque pictures as 8-bit RGB at zlib's fast end (quality 80: compression level 2): about 4 times faster than
    // Qt's default (ARGB at level 6) for files 20% larger; a study draws many.
    // Every picture drawn here has a size, so a null image is one whose pixels could not be allocated.
    const QImage opaque = image.isNull() ? QImage() : image.convertToFormat(QImage::Format_RGB888);
    if (opaque.isNull())
        return QStringLiteral("cannot draw '%1': out of memory (its image could not be allocated)").arg(path);
    if (!opaque.save(&buffer, "PNG", 80))
        return QStringLiteral("could not encode the image for '%1'").arg(path);
    // Written as every other file (a temporary beside it, then renamed), with the system's reason on failure
    // ("No space left on device"), which QSaveFile does not carry for a failed write.
    try {
        writeFileAtomically(
            path.toStdString(), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    } catch (const SgdError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

void showExportMenu(QWidget* widget, const Exportable& exportable, const QPoint& globalPos)
{
    QMenu menu(widget);
    QAction* save = menu.addAction(QObject::tr("Save as PNG..."));
    QAction* copy = menu.addAction(QObject::tr("Copy image"));
    QAction* chosen = menu.exec(globalPos);
    if (chosen == copy) {
        QApplication::clipboard()->setImage(exportable.renderImage(2.0));
    } else if (chosen == save) {
        const QString path = QFileDialog::getSaveFileName(widget, QObject::tr("Save chart as PNG"),
            QDir::home().filePath(exportable.exportName() + QStringLiteral(".png")), QObject::tr("PNG images (*.png)"));
        if (path.isEmpty())
            return;
        const QString error = savePng(exportable.renderImage(2.0), path);
        if (!error.isEmpty())
            QMessageBox::warning(widget, QObject::tr("Save as PNG"), error);
    }
}

QString modeTitle(Mode m)
{
    switch (m) {
    case Mode::Sync:
        return QObject::tr("Sync");
    case Mode::Async:
        return QObject::tr("Async");
    case Mode::Ssp:
        return QObject::tr("SSP");
    case Mode::Backup:
        return QObject::tr("Backup");
    case Mode::LocalSgd:
        return QObject::tr("Local SGD");
    case Mode::DcAsgd:
        return QObject::tr("DC-ASGD");
    }
    return QString::fromUtf8(modeName(m));
}

namespace palette {
QColor sync()
{
    return QColor(0x1f, 0x77, 0xb4);
}
QColor async()
{
    return QColor(0xe8, 0x6a, 0x10);
}
QColor mode(Mode m)
{
    switch (m) {
    case Mode::Sync:
        return sync();
    case Mode::Async:
        return async();
    case Mode::Backup:
        return QColor(0x2c, 0xa0, 0x8c); // teal: sync's family
    case Mode::DcAsgd:
        return QColor(0x94, 0x67, 0xbd); // purple: async's family
    case Mode::LocalSgd:
        return QColor(0x8c, 0x56, 0x4b); // brown: sync's family
    case Mode::Ssp:
        return QColor(0xbc, 0xbd, 0x22); // olive: between the two
    }
    return QColor(Qt::gray);
}
QColor busy()
{
    return QColor(0x4c, 0x78, 0xa8);
}
QColor delay()
{
    return QColor(0x9e, 0xca, 0xe9);
}
QColor idle()
{
    return QColor(0xe4, 0x57, 0x56);
}
QColor apply()
{
    return QColor(0x54, 0xa2, 0x4b);
}
QColor transfer()
{
    return QColor(0xb0, 0x7a, 0xa1);
}
QColor unaccounted()
{
    return QColor(0xc8, 0xc8, 0xc8);
}
} // namespace palette

} // namespace sgdscope::ui
