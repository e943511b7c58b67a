#include "ui/charts/LossChart.h"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

namespace {
constexpr int maxMarkerLines = 12;
constexpr std::size_t maxEvalDots = 60;

/// How many multiples of `step` lie in [lo, hi]: the ticks of a log axis of base 10^step over those decades.
int decadeTicks(int lo, int hi, int step)
{
    const auto floorDiv = [](int a, int b) { return static_cast<int>(std::floor(static_cast<double>(a) / b)); };
    return floorDiv(hi, step) - floorDiv(lo - 1, step);
}

void hideFromLegend(QChart* chart, QAbstractSeries* series)
{
    for (QLegendMarker* m : chart->legend()->markers(series))
        m->setVisible(false);
}
} // namespace

QString axisTitle(XAxisKind kind, bool virtualClock)
{
    if (kind == XAxisKind::Seconds && virtualClock)
        return QObject::tr("virtual seconds of the mode's clock (simulated)");
    switch (kind) {
    case XAxisKind::Updates:
        return QObject::tr("updates (sync) / pushes (async)");
    case XAxisKind::Samples:
        return QObject::tr("samples seen");
    case XAxisKind::Seconds:
        return QObject::tr("seconds of the mode's clock");
    }
    return {};
}

LossChart::LossChart(
    const QString& title, const QString& exportName, QList<Curve> curves, XAxisKind xAxis, QWidget* parent)
    : ChartPanel(title, exportName, parent)
    , m_x(new QValueAxis)
    , m_y(new QLogValueAxis)
    , m_xAxis(xAxis)
    , m_showRaw(curves.size() == 1)
{
    styleAxis(m_x, axisTitle(xAxis, false));
    styleAxis(m_y, tr("loss (log)"));
    m_x->setLabelFormat(QStringLiteral("%.3g"));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setBase(10);
    m_y->setMinorTickCount(0);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (const Curve& c : curves) {
        CurveSeries s;
        s.curve = c;
        s.raw = new QLineSeries;
        s.smooth = new QLineSeries;
        s.evals = new QScatterSeries;
        s.evals->setMarkerSize(6);
        s.evals->setBorderColor(Qt::white);
        s.diverged = new QScatterSeries;
        s.diverged->setName(tr("diverged"));
        s.diverged->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        s.diverged->setMarkerSize(11);
        s.diverged->setColor(QColor(0xd6, 0x27, 0x28));
        for (QAbstractSeries* series : {static_cast<QAbstractSeries*>(s.raw), static_cast<QAbstractSeries*>(s.smooth),
                 static_cast<QAbstractSeries*>(s.evals), static_cast<QAbstractSeries*>(s.diverged)}) {
            m_chart->addSeries(series);
            series->attachAxis(m_x);
            series->attachAxis(m_y);
        }
        hideFromLegend(m_chart, s.raw);
        hideFromLegend(m_chart, s.diverged);
        if (curves.size() > 1)
            hideFromLegend(m_chart, s.evals);
        m_curves.append(s);
        setCurve(static_cast<int>(m_curves.size()) - 1, c.color, c.name);
    }
    for (int i = 0; i < maxMarkerLines; ++i) {
        auto* line = new QLineSeries;
        line->setPen(QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DashLine));
        m_chart->addSeries(line);
        line->attachAxis(m_x);
        line->attachAxis(m_y);
        hideFromLegend(m_chart, line);
        m_markerLines.append(line);
    }
    m_x->setRange(0, 1);
    m_y->setRange(0.01, 10);
}

void LossChart::setCurve(int curve, const QColor& color, const QString& name)
{
    CurveSeries& s = m_curves[curve];
    s.curve.color = color;
    s.curve.name = name;
    QColor faint = color;
    faint.setAlpha(70);
    s.raw->setPen(QPen(faint, 1));
    s.raw->setName(name + tr(" batch loss"));
    s.smooth->setPen(QPen(color, 2));
    s.smooth->setName(name + tr(" (smoothed)"));
    s.evals->setName(name + (m_showTest ? tr(" test set") : tr(" whole training set")));
    s.evals->setColor(color.darker(130));
}

QString LossChart::curveName(int curve) const
{
    return m_curves[curve].smooth->name();
}

void LossChart::setXAxis(XAxisKind kind)
{
    m_xAxis = kind;
    updateAxisTitle();
    refresh();
}

void LossChart::setShowTestSet(bool test)
{
    if (test == m_showTest)
        return;
    m_showTest = test;
    refresh();
}

void LossChart::setUpdatesTitle(const QString& title)
{
    m_updatesTitle = title;
    updateAxisTitle();
}

QString LossChart::xAxisTitle() const
{
    return m_x->property("sgdscopeTitle").toString();
}

void LossChart::updateAxisTitle()
{
    bool virtualClock = false;
    for (const CurveSeries& s : m_curves)
        virtualClock = virtualClock || s.curve.series->status().virtualClock;
    const QString title = m_xAxis == XAxisKind::Updates && !m_updatesTitle.isEmpty() ? m_updatesTitle
                                                                                     : axisTitle(m_xAxis, virtualClock);
    if (m_x->property("sgdscopeTitle").toString() == title)
        return;
    m_x->setProperty("sgdscopeTitle", title);
    m_x->setTitleText(height() >= 130 ? title : QString());
}

void LossChart::refresh()
{
    updateAxisTitle();
    double xMax = 0;
    for (const CurveSeries& s : m_curves) {
        const auto& points = s.curve.series->points();
        if (!points.empty())
            xMax = std::max(xMax, xOf(points.back(), m_xAxis));
        const auto& evals = s.curve.series->evals();
        if (!evals.empty())
            xMax = std::max(xMax, xOf(evals.back(), m_xAxis));
    }
    const bool allAtZero = xMax <= 0; // nothing yet, or only the first look's evaluation at 0
    if (xMax <= 0)
        xMax = 1;
    const int columns = plotColumns();
    double yMin = INFINITY, yMax = -INFINITY;
    for (CurveSeries& s : m_curves) {
        const ModeSeries& store = *s.curve.series;
        // The raw curve as a min/max pair per two pixel columns: all its spread, half the points to draw.
        const QList<QPointF> raw
            = m_showRaw ? decimateMinMax(store.points(), m_xAxis, 0, xMax, columns / 2) : QList<QPointF> {};
        const QList<QPointF> smooth = smoothed(store.points(), m_xAxis, 0, xMax, columns);
        // Whole-training-set losses as dots: each is a graphics item in Qt Charts, so at most
        // maxEvalDots per curve, evenly spread, and none in the comparison charts.
        QList<QPointF> evals;
        const auto& allEvals = store.evals();
        const std::size_t stride = (allEvals.size() + maxEvalDots - 1) / maxEvalDots;
        const bool test = m_showTest && !allEvals.empty() && allEvals.back().hasTest;
        s.evals->setName(s.curve.name + (test ? tr(" test set") : tr(" whole training set")));
        for (std::size_t i = 0; m_showRaw && i < allEvals.size(); i += std::max<std::size_t>(1, stride)) {
            const EvalPoint& e = allEvals[allEvals.size() - 1 - i]; // from the newest, so the latest is shown
            const double loss = test ? e.testLoss : e.loss;
            if (std::isfinite(loss) && loss > 0)
                evals.prepend(QPointF(xOf(e, m_xAxis), loss));
        }
        for (const QList<QPointF>* list : {&raw, &smooth, static_cast<const QList<QPointF>*>(&evals)}) {
            for (const QPointF& p : *list) {
                yMin = std::min(yMin, p.y());
                yMax = std::max(yMax, p.y());
            }
        }
        s.raw->replace(raw);
        s.smooth->replace(smooth);
        s.evals->replace(evals);
        QList<QPointF> cross;
        if (store.status().diverged && !store.points().empty()) {
            const LossPoint& last = store.points().back(); // the last finite point: the curve ends there
            cross.append(QPointF(xOf(last, m_xAxis), std::exp(static_cast<double>(last.smoothedLog))));
        }
        s.diverged->replace(cross);
    }
    if (!(yMin < yMax)) {
        yMin = std::isfinite(yMin) ? yMin / 2 : 0.01;
        yMax = std::isfinite(yMax) ? yMax * 2 : 10;
    }
    // A tick per decade up to maxTicks; a loss that blew up spans dozens of decades, so its ticks step by
    // several at once (Qt puts them at the powers of the axis's base; a tick per decade would crowd their
    // labels into "...").
    constexpr int maxTicks = 7;
    const int loDecade = static_cast<int>(std::floor(std::log10(std::clamp(yMin * 0.9, 1e-30, 1e30))));
    const int hiDecade = static_cast<int>(std::ceil(std::log10(std::clamp(yMax * 1.1, 1e-30, 1e300))));
    int step = 1;
    while (decadeTicks(loDecade, hiDecade, step) > maxTicks)
        ++step;
    const double lo = std::pow(10.0, loDecade);
    const double hi = std::pow(10.0, hiDecade);
    if (m_y->base() != std::pow(10.0, step))
        m_y->setBase(std::pow(10.0, step));
    if (m_y->min() != lo || m_y->max() != hi)
        m_y->setRange(lo, hi);
    setRoundTicks(m_x, xMax);
    if (allAtZero)
        m_x->setMin(-0.04 * m_x->max()); // a dot at 0 drawn whole, not half hidden by the axis

    // Configuration changes: the latest few of every curve, as vertical lines.
    QList<double> markerXs;
    for (const CurveSeries& s : m_curves) {
        for (const Marker& m : s.curve.series->markers())
            markerXs.append(xOf(m, m_xAxis));
    }
    while (markerXs.size() > maxMarkerLines)
        markerXs.removeFirst();
    for (int i = 0; i < maxMarkerLines; ++i) {
        if (i < markerXs.size())
            m_markerLines[i]->replace(QList<QPointF> {QPointF(markerXs[i], lo), QPointF(markerXs[i], hi)});
        else if (m_markerLines[i]->count() > 0)
            m_markerLines[i]->clear();
    }
}

int LossChart::rawPointCount(int curve) const
{
    return m_curves[curve].raw->count();
}

double LossChart::divergedMarkerX(int curve) const
{
    const QScatterSeries* s = m_curves[curve].diverged;
    return s->count() > 0 ? s->at(0).x() : std::nan("");
}

int LossChart::yTickCount() const
{
    const int step = static_cast<int>(std::lround(std::log10(m_y->base())));
    return decadeTicks(static_cast<int>(std::lround(std::log10(m_y->min()))),
        static_cast<int>(std::lround(std::log10(m_y->max()))), step);
}

int LossChart::markerLineCount() const
{
    int n = 0;
    for (const QLineSeries* line : m_markerLines)
        n += line->count() > 0 ? 1 : 0;
    return n;
}

} // namespace sgdscope::ui
