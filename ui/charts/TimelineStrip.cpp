#include "ui/charts/TimelineStrip.h"

#include <QContextMenuEvent>
#include <QPainter>

#include <array>
#include <cmath>

namespace sgdscope::ui {

namespace {
constexpr int KindCount = TimeBin::KindCount;
constexpr double windowSeconds = 2.0;
} // namespace

TimelineStrip::TimelineStrip(const QString& title, const QString& exportName, const ModeSeries* series, QWidget* parent)
    : QWidget(parent)
    , m_series(series)
    , m_title(title)
    , m_exportName(exportName)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(tr("The last two seconds of this mode's clock, one row per current worker: computing (blue; light "
                  "blue is injected straggler delay), waiting (red), combining or applying (green) and copying "
                  "or sending parameters and gradients (purple)."));
}

void TimelineStrip::setWorkers(int workers)
{
    m_workers = std::max(1, workers);
}

QImage TimelineStrip::renderImage(qreal scale) const
{
    QImage image(size() * scale, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        return image; // out of memory: savePng says so
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter painter(&image);
    const_cast<TimelineStrip*>(this)->render(&painter);
    return image;
}

void TimelineStrip::contextMenuEvent(QContextMenuEvent* event)
{
    showExportMenu(this, *this, event->globalPos());
}

void TimelineStrip::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(font().pointSizeF() * 0.95);
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.8);
    const QFontMetrics fm(small);
    const QFontMetrics tfm(titleFont);

    // Title and legend.
    p.setFont(titleFont);
    p.setPen(Qt::black);
    p.drawText(QRect(0, 2, width(), tfm.height()), Qt::AlignHCenter,
        m_series->status().virtualClock ? tr("%1 (virtual seconds)").arg(m_title) : m_title);
    p.setFont(small);
    const std::array<std::pair<QColor, QString>, KindCount> legend
        = {{{palette::busy(), tr("compute")}, {palette::delay(), tr("delay")}, {palette::idle(), tr("wait")},
            {palette::apply(), tr("apply")}, {palette::transfer(), tr("copy/send")}}};
    int lx = 6;
    int ly = tfm.height() + 4;
    for (const auto& [color, name] : legend) {
        const int itemWidth = 12 + fm.horizontalAdvance(name) + 10;
        if (lx > 6 && lx + itemWidth - 10 > width()) { // wrap to a second line in a narrow strip
            lx = 6;
            ly += fm.height();
        }
        p.fillRect(lx, ly + 2, 9, 9, color);
        p.setPen(Qt::black);
        p.drawText(lx + 12, ly + fm.ascent(), name);
        lx += itemWidth;
    }

    const int labelWidth = fm.horizontalAdvance(QStringLiteral("w%1").arg(std::max(10, m_workers - 1))) + 6;
    const QRect plot(labelWidth, ly + fm.height() + 4, width() - labelWidth - 8,
        height() - (ly + fm.height() + 4) - fm.height() - 4);
    if (plot.width() < 10 || plot.height() < 4)
        return;
    p.setPen(QColor(0xc0, 0xc0, 0xc0));
    p.drawRect(plot.adjusted(0, 0, -1, -1));

    const auto& bins = m_series->timeline();
    // One row per worker while there is a pixel for each; beyond that a heatmap: each pixel row holds a
    // group of workers (their time added up, so a row shows the group's shares of each kind).
    const int workers = m_workers;
    const int rows = std::max(1, std::min(workers, plot.height() - 2));
    auto rowOf = [&](int worker) { return static_cast<int>(static_cast<std::int64_t>(worker) * rows / workers); };
    const double rowWeight = static_cast<double>(rows) / workers; // a row's cells hold this many workers' time
    const double now = bins.empty()
        ? windowSeconds
        : std::max(static_cast<double>(bins.back().bin + 1) * TimeBin::width, windowSeconds);
    const double t0 = now - windowSeconds;
    const int columns = plot.width();
    const double perColumn = windowSeconds / columns;
    // time[row][column][kind]: seconds of each kind in each pixel column (bins narrower than a column are
    // summed; wider ones are spread over the columns they cover).
    std::vector<std::array<float, KindCount>> time(
        static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns), std::array<float, KindCount> {});
    for (const TimeBin& b : bins) {
        if (b.worker >= workers)
            continue;
        const double a = static_cast<double>(b.bin) * TimeBin::width;
        const double e = a + TimeBin::width;
        if (e <= t0)
            continue;
        const int c0 = std::clamp(static_cast<int>((std::max(a, t0) - t0) / perColumn), 0, columns - 1);
        const int c1 = std::clamp(static_cast<int>((std::min(e, now) - t0) / perColumn - 1e-9), 0, columns - 1);
        const double share = 1.0 / (c1 - c0 + 1);
        for (int c = c0; c <= c1; ++c) {
            auto& cell = time[static_cast<std::size_t>(rowOf(b.worker)) * static_cast<std::size_t>(columns)
                + static_cast<std::size_t>(c)];
            for (int k = 0; k < KindCount; ++k)
                cell[static_cast<std::size_t>(k)]
                    += static_cast<float>(b.seconds[static_cast<std::size_t>(k)] * share * rowWeight);
        }
    }
    const double rowHeight = static_cast<double>(plot.height() - 2) / rows;
    const std::array<QColor, KindCount> colors
        = {palette::busy(), palette::delay(), palette::idle(), palette::apply(), palette::transfer()};
    for (int r = 0; r < rows; ++r) {
        const double top = plot.top() + 1 + r * rowHeight;
        const double h = std::max(1.0, rowHeight - (rowHeight > 6 ? 1.0 : 0.0));
        for (int c = 0; c < columns; ++c) {
            const auto& t
                = time[static_cast<std::size_t>(r) * static_cast<std::size_t>(columns) + static_cast<std::size_t>(c)];
            double y = top;
            for (int k = 0; k < KindCount; ++k) {
                const double share = std::min(1.0, t[static_cast<std::size_t>(k)] / perColumn);
                if (share <= 0.0)
                    continue;
                const double hh = share * h;
                p.fillRect(QRectF(plot.left() + c, y, 1.0, hh), colors[static_cast<std::size_t>(k)]);
                y += hh;
            }
        }
        const int firstWorker = static_cast<int>((static_cast<std::int64_t>(r) * workers + rows - 1) / rows);
        const int labelEvery = std::max(1, static_cast<int>(std::ceil(fm.height() / std::max(rowHeight, 0.01))));
        if (rowHeight >= fm.height() - 2 || r % std::max(labelEvery, rows / 8) == 0) {
            p.setPen(Qt::black);
            p.drawText(QRectF(0, top - (rowHeight < fm.height() ? fm.height() / 2.0 : 0), labelWidth - 4,
                           std::max(rowHeight, static_cast<double>(fm.height()))),
                Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("w%1").arg(firstWorker));
        }
    }
    // Time axis: seconds before now; in the first two seconds of the clock, the clock itself (the strip's right
    // part is then still to come).
    p.setPen(Qt::black);
    const bool early = t0 <= 0.0;
    for (int i = 0; i <= 4; ++i) {
        const double x = plot.left() + plot.width() * i / 4.0;
        const QString label = early ? QStringLiteral("%1 s").arg(windowSeconds * i / 4.0, 0, 'g', 2)
            : i == 4                ? tr("now")
                                    : QStringLiteral("\u2212%1 s").arg(windowSeconds * (4 - i) / 4.0, 0, 'g', 2);
        const int w = fm.horizontalAdvance(label);
        p.drawText(QPointF(std::clamp(x - w / 2.0, 0.0, width() - w - 1.0), plot.bottom() + fm.ascent() + 2), label);
    }
}

} // namespace sgdscope::ui
