#include "ui/charts/AccuracyChart.h"

#include "ui/charts/LossChart.h"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QStringList>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

namespace {
// Each dot is a graphics item in Qt Charts: a long window session has thousands of evaluations.
constexpr int maxDots = 60;

double accuracyOf(const EvalPoint& e, bool test)
{
    return test ? e.testAccuracy : e.accuracy;
}
} // namespace

AccuracyChart::AccuracyChart(QList<Curve> curves, QWidget* parent)
    : ChartPanel(QString(), QStringLiteral("comparison-accuracy"), parent)
    , m_target(new QLineSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis)
{
    styleAxis(m_x, axisTitle(XAxisKind::Seconds, false));
    styleAxis(m_y, tr("accuracy"));
    m_x->setLabelFormat(QStringLiteral("%.3g"));
    m_y->setLabelFormat(QStringLiteral("%.2f"));
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    for (const Curve& c : curves) {
        CurveSeries s;
        s.curve = c;
        s.line = new QLineSeries;
        s.dots = new QScatterSeries;
        s.dots->setMarkerSize(6);
        s.dots->setBorderColor(Qt::white);
        for (QAbstractSeries* series : {static_cast<QAbstractSeries*>(s.line), static_cast<QAbstractSeries*>(s.dots)}) {
            m_chart->addSeries(series);
            series->attachAxis(m_x);
            series->attachAxis(m_y);
        }
        for (QLegendMarker* m : m_chart->legend()->markers(s.dots))
            m->setVisible(false);
        m_curves.append(s);
        setCurve(static_cast<int>(m_curves.size()) - 1, c.color, c.name);
    }
    m_target->setPen(QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DashLine));
    m_target->setName(tr("target"));
    m_chart->addSeries(m_target);
    m_target->attachAxis(m_x);
    m_target->attachAxis(m_y);
    m_x->setRange(0, 1);
    m_y->setRange(0, 1);
    setToolTip(
        tr("Both columns' modes' accuracy at each whole-set evaluation against their own clocks: on the held-out "
           "test set where the data set has one, else on the whole training set (see the legend). The "
           "dashed line is the target, when one is set."));
}

void AccuracyChart::setCurve(int curve, const QColor& color, const QString& name)
{
    CurveSeries& s = m_curves[curve];
    s.curve.color = color;
    s.curve.name = name;
    s.line->setPen(QPen(color, 2));
    s.line->setName(name);
    s.dots->setColor(color.darker(130));
    m_chart->setTitle(tr("%1: accuracy against seconds").arg(subject())); // until refresh() knows which
}

QString AccuracyChart::subject() const
{
    QStringList names;
    for (const CurveSeries& s : m_curves)
        names << s.curve.name;
    return names.join(tr(" vs "));
}

void AccuracyChart::refresh()
{
    bool virtualClock = false;
    bool anyTest = false;
    bool anyAccuracy = false;
    double xMax = 0;
    for (const CurveSeries& s : m_curves) {
        virtualClock = virtualClock || s.curve.series->status().virtualClock;
        for (const EvalPoint& e : s.curve.series->evals()) {
            anyTest = anyTest || (e.hasTest && e.testAccuracy >= 0);
            anyAccuracy = anyAccuracy || e.accuracy >= 0 || e.testAccuracy >= 0;
            xMax = std::max(xMax, e.seconds);
        }
        if (!s.curve.series->points().empty())
            xMax = std::max(xMax, s.curve.series->points().back().seconds);
    }
    const QString xTitle = axisTitle(XAxisKind::Seconds, virtualClock);
    if (m_x->property("sgdscopeTitle").toString() != xTitle) {
        m_x->setProperty("sgdscopeTitle", xTitle); // ChartPanel::resizeEvent shows it where there is room
        m_x->setTitleText(height() >= 130 ? xTitle : QString());
    }
    const QString what = anyTest ? tr("test set") : tr("whole training set");
    bool anyEvaluation = false;
    for (const CurveSeries& s : m_curves)
        anyEvaluation = anyEvaluation || !s.curve.series->evals().empty();
    if (!anyEvaluation)
        m_chart->setTitle(tr("%1: accuracy against seconds").arg(subject()));
    else if (!anyAccuracy)
        m_chart->setTitle(tr("%1: no accuracy (a regression loss)").arg(subject()));
    else
        m_chart->setTitle(tr("%1: %2 accuracy").arg(subject(), what)); // (against seconds: the x axis says so)
    double yMin = 1.0;
    double target = -1.0;
    const int columns = std::max(2, plotColumns());
    for (CurveSeries& s : m_curves) {
        QList<QPointF> points;
        for (const EvalPoint& e : s.curve.series->evals()) {
            const double a = accuracyOf(e, anyTest);
            if (a >= 0 && std::isfinite(a)) {
                points.append(QPointF(e.seconds, a));
                yMin = std::min(yMin, a);
            }
        }
        // Evenly thinned from the newest, so the latest evaluation is always drawn.
        const auto thinned = [&points](int most) {
            const qsizetype stride = std::max<qsizetype>(1, (points.size() + most - 1) / most);
            QList<QPointF> kept;
            for (qsizetype i = points.size() - 1; i >= 0; i -= stride)
                kept.prepend(points[i]);
            return kept;
        };
        s.line->setName(anyAccuracy ? s.curve.name + QStringLiteral(" (") + what + QStringLiteral(")") : s.curve.name);
        s.line->replace(thinned(columns));
        s.dots->replace(thinned(maxDots));
        target = std::max(target, s.curve.series->status().targetAccuracy);
    }
    const bool allAtZero = xMax <= 0; // nothing yet, or only the first look's evaluation at 0
    if (xMax <= 0)
        xMax = 1;
    // The target is a test accuracy: drawn only against test-set curves.
    if (anyTest && target >= 0 && target <= 1) {
        m_target->replace({QPointF(0, target), QPointF(xMax, target)});
        yMin = std::min(yMin, target);
    } else if (m_target->count() > 0) {
        m_target->clear();
    }
    for (QLegendMarker* m : m_chart->legend()->markers(m_target))
        m->setVisible(m_target->count() > 0);
    // From the tenth below the lowest value to 1: early low points stay visible, late gains stay readable.
    const double lo = std::max(0.0, std::floor(yMin * 10.0 - 1e-9) / 10.0);
    if (m_y->min() != lo || m_y->max() != 1.0)
        m_y->setRange(lo, 1.0);
    setRoundTicks(m_x, xMax);
    if (allAtZero)
        m_x->setMin(-0.04 * m_x->max()); // a dot at 0 drawn whole, not half hidden by the axis
}

QList<QPointF> AccuracyChart::linePoints(int curve) const
{
    return m_curves[curve].line->points();
}

double AccuracyChart::targetDrawn() const
{
    return m_target->count() > 0 ? m_target->at(0).y() : std::nan("");
}

QString AccuracyChart::xAxisTitle() const
{
    return m_x->property("sgdscopeTitle").toString();
}

} // namespace sgdscope::ui
