#include "ui/charts/StudyChart.h"

#include "core/common/NamedValues.h"
#include "core/metrics/Events.h"

#include <QApplication>
#include <QAreaSeries>
#include <QCursor>
#include <QDir>
#include <QFontMetricsF>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

namespace {

QColor lineColor(const FigureLine& line)
{
    if (line.reference)
        return QColor(0x80, 0x80, 0x80);
    const auto mode = valueNamed(modeNames, line.mode);
    QColor c = mode ? palette::mode(*mode) : QColor(0x44, 0x44, 0x44);
    // Further lines of a mode: lighter, then darker, in turn.
    for (int v = 0; v < line.variant; ++v)
        c = v % 2 == 0 ? c.lighter(135) : c.darker(150);
    return c;
}

Qt::PenStyle lineStyle(const FigureLine& line)
{
    if (line.reference)
        return Qt::DashLine;
    static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
    return styles[line.variant % 4];
}

QString number(double v)
{
    return QString::number(v, 'g', 4);
}

/// `line` broken after its separators into lines no wider than `room`: after "; " first, then, inside an item
/// still too wide, after ", ", then at spaces (a single word wider than `room` keeps its line).
QStringList wrapLine(const QString& line, const QFontMetricsF& metrics, qreal room, int level = 0)
{
    static const QString separators[] = {QStringLiteral("; "), QStringLiteral(", "), QStringLiteral(" ")};
    if (level >= 3 || metrics.horizontalAdvance(line) <= room)
        return {line};
    const QString& separator = separators[level];
    QStringList out;
    QString current;
    const QStringList items = line.split(separator);
    for (int i = 0; i < items.size(); ++i) {
        // A break keeps the separator's mark (";" or ",") at the end of its line; only the space goes.
        const QString item = items[i] + (i + 1 < items.size() ? separator.trimmed() : QString());
        const QString joined = current.isEmpty() ? item : current + QLatin1Char(' ') + item;
        if (!current.isEmpty() && metrics.horizontalAdvance(joined) > room) {
            out << wrapLine(current, metrics, room, level + 1);
            current = item;
        } else {
            current = joined;
        }
    }
    out << wrapLine(current, metrics, room, level + 1);
    return out;
}

/// A range's ends on a logarithmic axis: whole powers of the base around the data.
std::pair<double, double> logRange(double low, double high, double base)
{
    const double lo = std::pow(base, std::floor(std::log(low) / std::log(base) + 1e-9));
    double hi = std::pow(base, std::ceil(std::log(high) / std::log(base) - 1e-9));
    if (hi <= lo)
        hi = lo * base;
    return {lo, hi};
}

} // namespace

StudyChart::StudyChart(StudyFigure figure, QWidget* parent)
    : ChartPanel(QString::fromStdString(figure.title),
        QString::fromStdString(figure.file).chopped(figure.file.size() >= 4 ? 4 : 0), parent)
    , m_figure(std::move(figure))
{
    // What the band is and what is missing belongs on the picture, not only in a tooltip: plain lines under the
    // title, wrapped to the chart's width (showTitle).
    showTitle();
    buildAxes();
}

void StudyChart::resizeEvent(QResizeEvent* event)
{
    ChartPanel::resizeEvent(event);
    showTitle();
}

void StudyChart::showTitle()
{
    if (m_figure.note.empty())
        return;
    // Qt Charts lays its title out as rich text and cuts a line that does not fit ("mode=async, wo..."): the
    // note's lines are broken after their "; " (then ", ", then spaces) to fit the chart's width, measured with the
    // title's own font (the note is drawn smaller, so this errs on the side of a shorter line).
    QFont plain = m_chart->titleFont();
    plain.setBold(false);
    const QFontMetricsF metrics(plain);
    const qreal room = std::max<qreal>(120.0, width() - 40.0);
    QStringList shown;
    for (const QString& line : QString::fromStdString(m_figure.note).split(QLatin1Char('\n')))
        for (const QString& part : wrapLine(line, metrics, room))
            shown << part.toHtmlEscaped();
    const QString title = QString::fromStdString(m_figure.title).toHtmlEscaped()
        + QStringLiteral("<br><span style=\"font-weight:normal; font-size:small\">")
        + shown.join(QStringLiteral("<br>")) + QStringLiteral("</span>");
    if (m_chart->title() != title)
        m_chart->setTitle(title);
}

void StudyChart::buildAxes()
{
    double xLow = INFINITY;
    double xHigh = -INFINITY;
    double yLow = INFINITY;
    double yHigh = -INFINITY;
    for (const FigureLine& line : m_figure.lines) {
        for (const FigurePoint& p : line.points) {
            xLow = std::min(xLow, p.x);
            xHigh = std::max(xHigh, p.x);
            yLow = std::min(yLow, p.low);
            yHigh = std::max(yHigh, p.high);
        }
    }
    if (!std::isfinite(xLow)) {
        xLow = 0;
        xHigh = 1;
        yLow = 0;
        yHigh = 1;
    }
    const QString xTitle = QString::fromStdString(m_figure.xTitle);
    const QString yTitle = QString::fromStdString(m_figure.yTitle);
    QAbstractAxis* x = nullptr;
    QAbstractAxis* y = nullptr;
    if (m_figure.logX && xLow > 0) {
        auto* axis = new QLogValueAxis;
        axis->setBase(m_figure.logXBase);
        axis->setLabelFormat(QStringLiteral("%g"));
        // A little room around the first and last points (a fifth of a factor of the base each side).
        const double room = std::pow(m_figure.logXBase, 0.2);
        axis->setRange(xLow / room, xHigh * room);
        axis->setMinorTickCount(0);
        x = axis;
    } else {
        auto* axis = new QValueAxis;
        const double pad = xHigh > xLow ? 0.04 * (xHigh - xLow) : std::max(1.0, std::abs(xLow) * 0.1);
        axis->setRange(xLow - pad, xHigh + pad);
        // Ticks at round steps of 1, 2 or 5 (0, 0.05, 0.1, ...) from a multiple of the step, five to eight of them
        // across the points, not at the padded ends' fifths (-0.012, 0.069, ...).
        const double span = xHigh > xLow ? xHigh - xLow : 1.0;
        double step = std::pow(10.0, std::floor(std::log10(span / 6.0)));
        for (const double m : {1.0, 2.0, 5.0, 10.0}) {
            if (span / (step * m) <= 8.0) {
                step *= m;
                break;
            }
        }
        axis->setTickType(QValueAxis::TicksDynamic);
        axis->setTickAnchor(std::floor(xLow / step) * step);
        axis->setTickInterval(step);
        axis->setLabelFormat(QStringLiteral("%g"));
        x = axis;
    }
    if (m_figure.logY && yLow > 0) {
        auto* axis = new QLogValueAxis;
        axis->setBase(10.0);
        axis->setLabelFormat(QStringLiteral("%g"));
        const auto [lo, hi] = logRange(yLow, yHigh, 10.0);
        // The ends a hair outside the powers: Qt Charts drops the label of a power that sits exactly on an end
        // (0.1 under a speedup chart went unlabeled).
        axis->setRange(lo * (1.0 - 1e-6), hi * (1.0 + 1e-6));
        axis->setMinorTickCount(-1);
        QPen minor = axis->minorGridLinePen();
        minor.setColor(QColor(0xf0, 0xf0, 0xf0));
        axis->setMinorGridLinePen(minor);
        y = axis;
    } else {
        auto* axis = new QValueAxis;
        if (m_figure.fromZero || yLow >= 0) {
            setRoundTicks(axis, yHigh > 0 ? yHigh * 1.05 : 1.0);
        } else {
            const double pad = yHigh > yLow ? 0.05 * (yHigh - yLow) : 1.0;
            axis->setRange(yLow - pad, yHigh + pad);
            axis->applyNiceNumbers();
        }
        axis->setLabelFormat(QStringLiteral("%g"));
        y = axis;
    }
    styleAxis(x, xTitle);
    styleAxis(y, yTitle);
    m_chart->addAxis(x, Qt::AlignBottom);
    m_chart->addAxis(y, Qt::AlignLeft);

    for (int i = 0; i < static_cast<int>(m_figure.lines.size()); ++i) {
        const FigureLine& line = m_figure.lines[static_cast<std::size_t>(i)];
        const QColor color = lineColor(line);
        const bool band = !line.reference
            && std::any_of(line.points.begin(), line.points.end(), [](const FigurePoint& p) { return p.high > p.low; });
        if (band) {
            auto* upper = new QLineSeries;
            auto* lower = new QLineSeries;
            for (const FigurePoint& p : line.points) {
                upper->append(p.x, p.high);
                lower->append(p.x, p.low);
            }
            auto* area = new QAreaSeries(upper, lower);
            upper->setParent(area);
            lower->setParent(area);
            QColor fill = color;
            fill.setAlpha(55);
            area->setBrush(fill);
            area->setPen(Qt::NoPen);
            m_chart->addSeries(area);
            area->attachAxis(x);
            area->attachAxis(y);
            for (QLegendMarker* marker : m_chart->legend()->markers(area))
                marker->setVisible(false);
        }
        auto* median = new QLineSeries;
        median->setName(QString::fromStdString(line.name));
        QList<QPointF> points;
        for (const FigurePoint& p : line.points)
            points.append(QPointF(p.x, p.median));
        median->replace(points);
        QPen pen(color);
        pen.setWidthF(line.reference ? 1.2 : 2.0);
        pen.setStyle(lineStyle(line));
        median->setPen(pen);
        median->setPointsVisible(!line.reference);
        m_chart->addSeries(median);
        median->attachAxis(x);
        median->attachAxis(y);
        if (line.reference)
            continue;
        connect(median, &QLineSeries::hovered, this, [this, i](const QPointF& at, bool state) {
            if (state)
                QToolTip::showText(QCursor::pos(), describePoint(i, at.x()), this);
            else
                QToolTip::hideText();
        });
        connect(median, &QLineSeries::clicked, this, [this, i](const QPointF& at) {
            const QString folder = folderAt(i, at.x());
            if (!folder.isEmpty())
                Q_EMIT pointClicked(folder);
        });
    }
    // Always a legend, one line too: it names the mode (staleness is drawn for async alone).
    m_chart->legend()->setVisible(!m_figure.lines.empty());
}

const FigurePoint* StudyChart::nearest(int line, double x) const
{
    if (line < 0 || line >= static_cast<int>(m_figure.lines.size()))
        return nullptr;
    const FigureLine& l = m_figure.lines[static_cast<std::size_t>(line)];
    const FigurePoint* best = nullptr;
    double distance = INFINITY;
    for (const FigurePoint& p : l.points) {
        const double d = m_figure.logX && p.x > 0 && x > 0 ? std::abs(std::log(p.x / x)) : std::abs(p.x - x);
        if (d < distance) {
            distance = d;
            best = &p;
        }
    }
    return best;
}

QString StudyChart::describePoint(int line, double x) const
{
    const FigurePoint* p = nearest(line, x);
    if (!p)
        return {};
    const FigureLine& l = m_figure.lines[static_cast<std::size_t>(line)];
    QString text = QStringLiteral("%1 · %2 %3\n%4: %5")
                       .arg(QString::fromStdString(l.name), QString::fromStdString(m_figure.xTitle), number(p->x),
                           QString::fromStdString(m_figure.yTitle), number(p->median));
    if (p->withoutValue > 0)
        text += tr("\nmedian of %1 runs, %2 of them without a value (counted as the worst); the others %3 to %4")
                    .arg(p->folders.size())
                    .arg(p->withoutValue)
                    .arg(number(p->low), number(p->high));
    else if (p->folders.size() > 1)
        text += tr("\nmedian of %1 runs, %2 to %3").arg(p->folders.size()).arg(number(p->low), number(p->high));
    if (!p->folders.empty())
        text += tr("\nclick: open %1").arg(QString::fromStdString(p->folders.front()));
    return text;
}

QString StudyChart::folderAt(int line, double x) const
{
    const FigurePoint* p = nearest(line, x);
    return p && !p->folders.empty() ? QString::fromStdString(p->folders.front()) : QString();
}

QStringList writeStudyCharts(const QString& dir, const std::vector<StudyFigure>& figures)
{
    QStringList problems;
    const QDir folder(dir);
    for (const StudyFigure& figure : figures) {
        StudyChart chart(figure);
        chart.setAttribute(Qt::WA_DontShowOnScreen);
        chart.resize(720, 460);
        chart.show();
        QApplication::processEvents(); // the layout: the plot area gets its size
        const QString error = savePng(chart.renderImage(2.0), folder.filePath(QString::fromStdString(figure.file)));
        if (!error.isEmpty())
            problems << error;
    }
    return problems;
}

} // namespace sgdscope::ui
