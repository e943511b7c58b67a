#pragma once

#include "core/metrics/Events.h"

#include <QImage>
#include <QString>

class QWidget;
class QPoint;

namespace sgdscope::ui {

/// Anything the window can export as a picture: the charts and the timeline strip.
class Exportable
{
public:
    virtual ~Exportable() = default;
    /// File name stem for exports, e.g. "sync-loss".
    virtual QString exportName() const = 0;
    /// The widget drawn at `scale` device pixels per logical pixel (2 for exports), with its title,
    /// axis labels and legend.
    virtual QImage renderImage(qreal scale) const = 0;
};

/// Writes a PNG atomically (QSaveFile): the file is either complete or not there. The picture is stored opaque
/// (8-bit RGB: every chart is drawn on white). Returns an error
/// message, empty on success.
QString savePng(const QImage& image, const QString& path);

/// The right-click menu of an exportable widget: Save as PNG..., Copy image.
void showExportMenu(QWidget* widget, const Exportable& exportable, const QPoint& globalPos);

/// Colours shared by every chart, so a mode or a kind of time looks the same everywhere.
/// A mode's name in titles: "Sync", "Async", "SSP", "Backup", "Local SGD", "DC-ASGD".
QString modeTitle(Mode m);

namespace palette {
QColor sync();
QColor async();
/// A mode's colour: sync's and async's, and one of their own for the modes between them.
QColor mode(Mode m);
QColor busy();
QColor delay();
QColor idle();
QColor apply();
QColor transfer();
QColor unaccounted(); // time no span covers (bookkeeping between measured spans)
} // namespace palette

} // namespace sgdscope::ui
