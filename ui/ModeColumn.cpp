#include "ui/ModeColumn.h"

#include "ui/Controller.h"
#include "ui/ModeChoice.h"
#include "ui/PointConversion.h"
#include "ui/charts/HistogramChart.h"
#include "ui/charts/LossChart.h"
#include "ui/charts/TimelineStrip.h"
#include "ui/charts/TrendChart.h"
#include "ui/charts/WorkerBarsChart.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>

namespace sgdscope::ui {

namespace {
/// What a mode does, in one line (the header, beside the box).
QString description(Mode m)
{
    switch (m) {
    case Mode::Sync:
        return ModeColumn::tr("one update per batch; everybody waits for the slowest worker");
    case Mode::Async:
        return ModeColumn::tr("every worker applies at once; nobody waits, gradients are stale");
    case Mode::Ssp:
        return ModeColumn::tr("async, but no worker more than S pushes ahead of the slowest");
    case Mode::Backup:
        return ModeColumn::tr("sync that applies the first P \u2212 B gradients and drops the rest");
    case Mode::LocalSgd:
        return ModeColumn::tr("H local steps on each worker's own model, then an average");
    case Mode::DcAsgd:
        return ModeColumn::tr("async whose stale gradients are compensated for their delay (\u03bb)");
    }
    return {};
}

/// Lambda's box: as many decimals as a small lambda needs (--dc-lambda 0.0004), shown without trailing zeros.
class LambdaBox : public QDoubleSpinBox
{
public:
    using QDoubleSpinBox::QDoubleSpinBox;

protected:
    QString textFromValue(double value) const override
    {
        QString text = locale().toString(value, 'f', decimals());
        const QChar point = locale().decimalPoint().front();
        if (text.contains(point)) {
            while (text.endsWith(QLatin1Char('0')))
                text.chop(1);
            if (text.endsWith(point))
                text.chop(1);
        }
        return text;
    }
};

/// When a knob's change takes effect.
QString knobWhen(Mode m, bool live)
{
    if (!live)
        return ModeColumn::tr("Applies on Reset: an MPI job takes its settings when it starts.");
    switch (m) {
    case Mode::Backup:
        return ModeColumn::tr("Applies live, from the next update.");
    case Mode::LocalSgd:
        return ModeColumn::tr("Applies live, from the next round.");
    default:
        return ModeColumn::tr("Applies live, from the next push.");
    }
}
} // namespace

ModeColumn::ModeColumn(int column, const ModeSeries* series, QWidget* parent)
    : QWidget(parent)
    , m_column(column)
    , m_series(series)
{
    m_modeBox = new QComboBox;
    for (const QString& name : modeNameList()) {
        const Mode m = *modeNamed(name);
        m_modeBox->addItem(modeTitle(m), name);
        m_modeBox->setItemData(m_modeBox->count() - 1, description(m), Qt::ToolTipRole);
    }
    m_modeBox->setToolTip(
        tr("The mode this column trains. Picking the mode the other column shows swaps the two columns' modes. "
           "A new mode applies on Reset (a run keeps its modes)."));
    m_modeBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_knobLabel = new QLabel;
    m_knob = new QSpinBox;
    m_knob->setKeyboardTracking(false); // a typed number is one change, not one per digit
    m_lambda = new LambdaBox;
    m_lambda->setKeyboardTracking(false);
    m_lambda->setDecimals(6); // (the box rounds its value to them)
    m_lambda->setSingleStep(0.01);
    const auto [lambdaLow, lambdaHigh] = Controller::windowRange("dc-lambda");
    m_lambda->setRange(lambdaLow, lambdaHigh);
    m_knobLabel->setBuddy(m_knob);
    m_description = new QLabel;
    m_description->setWordWrap(true);
    m_description->setStyleSheet(QStringLiteral("color:#555"));
    // Two lines, always: both columns' charts start at the same height whatever their modes' descriptions.
    m_description->setFixedHeight(2 * m_description->fontMetrics().lineSpacing() + 2);
    m_note = new QLabel;
    m_note->setStyleSheet(QStringLiteral("color:#b00020; font-weight:bold"));
    m_note->setWordWrap(true);
    m_note->setFixedHeight(2 * m_note->fontMetrics().lineSpacing() + 2);
    m_note->hide();

    auto* header = new QHBoxLayout;
    header->setContentsMargins(0, 0, 0, 0);
    header->setSpacing(6);
    header->addWidget(m_modeBox);
    header->addSpacing(4);
    header->addWidget(m_knobLabel);
    header->addWidget(m_knob);
    header->addWidget(m_lambda);
    header->addSpacing(6);
    header->addWidget(m_description, 1);
    header->addWidget(m_note, 1);

    connect(m_modeBox, &QComboBox::activated, this, [this](int index) {
        if (!m_updating)
            emit modeChosen(m_modeBox->itemData(index).toString());
    });
    connect(m_knob, &QSpinBox::valueChanged, this, [this](int value) {
        if (!m_updating)
            emit knobChanged(value);
    });
    connect(m_lambda, &QDoubleSpinBox::valueChanged, this, [this](double value) {
        if (!m_updating)
            emit knobChanged(value);
    });

    m_splitter = new QSplitter(Qt::Vertical);
    m_middle = new QSplitter(Qt::Horizontal);
    m_bottom = new QSplitter(Qt::Horizontal);
    m_splitter->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);
    layout->addLayout(header);
    layout->addWidget(m_splitter, 1);

    const ColumnModes defaults;
    m_shown = defaults.names[static_cast<std::size_t>(column)];
    buildCharts();
    setChoice(defaults, 1, QString());
}

void ModeColumn::buildCharts()
{
    const Mode mode = *modeNamed(m_shown);
    const bool syncLike = isSyncLike(mode);
    const QString name = modeTitle(mode);
    const QString stem = QString::fromUtf8(modeName(mode));
    const QColor color = palette::mode(mode);

    auto* loss
        = new LossChart(tr("%1 loss").arg(name), stem + QStringLiteral("-loss"), {{m_series, color, name}}, m_xAxis);
    loss->setShowTestSet(m_showTest);
    loss->setUpdatesTitle(mode == Mode::LocalSgd ? tr("rounds (H local steps and an averaging)")
            : syncLike                           ? tr("updates")
                                                 : tr("pushes"));
    loss->setToolTip(
        tr("Loss of each batch (faint), its smoothing (bold) and the loss on the whole training set (dots); "
           "dashed lines mark configuration changes."));
    auto* workers = new WorkerBarsChart(tr("%1 worker time").arg(name), stem + QStringLiteral("-workers"));
    workers->setToolTip(syncLike
            ? tr("Share of each current worker's wall time (since the run began or the last change of settings) "
                 "spent computing, waiting for the others, and combining gradients and applying the update.")
            : tr("Share of each current worker's wall time (since the run began or the last change of settings) "
                 "spent computing, waiting (for the lock, at SSP's bound or at a slice's end), applying its gradient "
                 "(with momentum) and copying the parameters."));
    auto* timeline = new TimelineStrip(tr("%1 timeline").arg(name), stem + QStringLiteral("-timeline"), m_series);
    HistogramChart* histogram = nullptr;
    TrendChart* trend = nullptr;
    HistogramChart* boundWaits = nullptr; // ssp: its waits at the bound, in place of the staleness trend
    if (syncLike) {
        histogram = new HistogramChart(tr("%1 wait per update").arg(name), stem + QStringLiteral("-wait"), color,
            tr("longest wait (seconds, by decade)"), tr("updates"));
        const QString update = mode == Mode::LocalSgd ? tr("round (H local steps and an averaging)")
            : mode == Mode::Backup                    ? tr("update (the first P \u2212 B gradients to arrive)")
                                                      : tr("update");
        histogram->setToolTip(
            tr("%1's price: in every %2, how long the worker that waited longest waited for the others (by decade: "
               "1m means 1 to 10 ms). It includes the team's start and join, and with passive OpenMP waiting the "
               "wake-up of sleeping threads.")
                .arg(name, update));
        trend = new TrendChart(tr("%1 mean wait per update").arg(name), stem + QStringLiteral("-wait-trend"), m_series,
            TrendValue::WaitSeconds, color);
        trend->setToolTip(tr("The mean of that wait over this mode's clock."));
    } else {
        histogram = new HistogramChart(tr("%1 staleness").arg(name), stem + QStringLiteral("-staleness"), color,
            tr("staleness (updates)"), tr("pushes"));
        QString tip = tr("%1's price: how many updates other workers applied between a gradient's read of the "
                         "parameters and its own apply.")
                          .arg(name);
        if (mode == Mode::Ssp)
            tip += tr(" SSP also waits at its bound: see the chart beside.");
        else if (mode == Mode::DcAsgd)
            tip += tr(" DC-ASGD compensates each stale gradient for its delay.");
        histogram->setToolTip(tip);
        if (mode == Mode::Ssp) {
            // SSP pays both ways: its pushes are stale, and its bound holds a worker that is too far ahead.
            boundWaits = new HistogramChart(tr("%1 wait at its bound").arg(name), stem + QStringLiteral("-bound-wait"),
                color, tr("held before a push (seconds, by decade)"), tr("pushes"));
            boundWaits->setToolTip(tr("SSP's other price: before each push, how long the bound held its worker back "
                                      "until the slowest worker caught up (by decade: 1m means 1 to 10 ms; pushes "
                                      "that were not held are in the first bar)."));
        } else {
            trend = new TrendChart(tr("%1 mean staleness").arg(name), stem + QStringLiteral("-staleness-trend"),
                m_series, TrendValue::Staleness, color);
            trend->setToolTip(
                tr("Mean staleness over this mode's clock; P \u2212 1 is what P equally fast async workers average."));
        }
    }
    QWidget* second = boundWaits ? static_cast<QWidget*>(boundWaits) : static_cast<QWidget*>(trend);

    // The splitters keep the sizes the user gave them (the initial ones are set when first shown: showEvent).
    const QList<QList<int>> sizes {m_splitter->sizes(), m_middle->sizes(), m_bottom->sizes()};
    if (!m_loss) {
        m_splitter->addWidget(loss);
        m_middle->addWidget(workers);
        m_middle->addWidget(timeline);
        m_bottom->addWidget(histogram);
        m_bottom->addWidget(second);
        for (QSplitter* s : {m_middle, m_bottom}) {
            s->setChildrenCollapsible(false);
            m_splitter->addWidget(s);
        }
    } else {
        for (QWidget* old : {static_cast<QWidget*>(m_splitter->replaceWidget(0, loss)),
                 m_middle->replaceWidget(0, workers), m_middle->replaceWidget(1, timeline),
                 m_bottom->replaceWidget(0, histogram), m_bottom->replaceWidget(1, second)}) {
            old->hide();
            old->deleteLater();
        }
        if (m_sized) {
            m_splitter->setSizes(sizes[0]);
            m_middle->setSizes(sizes[1]);
            m_bottom->setSizes(sizes[2]);
        }
    }
    // (A stretch factor is its widget's size policy: a new loss chart needs its own.)
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 2);
    m_splitter->setStretchFactor(2, 2);
    m_loss = loss;
    m_workers = workers;
    m_timeline = timeline;
    m_histogram = histogram;
    m_trend = trend;
    m_boundWaits = boundWaits;
    m_chartsFor = m_shown;
}

void ModeColumn::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_sized)
        return;
    // Initial proportions, once the column has its size (the charts' own size hints depend on their scenes and
    // are no guide, and a splitter not shown yet would take them over sizes set before).
    m_sized = true;
    m_splitter->setSizes({3000, 2000, 2000});
    m_middle->setSizes({1000, 1000});
    m_bottom->setSizes({1000, 1000});
}

void ModeColumn::showMode(const QString& name)
{
    if (!modeNamed(name) || name == m_shown)
        return;
    m_shown = name;
    buildCharts();
    refresh();
}

void ModeColumn::setChoice(const ColumnModes& modes, int maxBackupWorkers, const QString& note, bool knobsLive)
{
    m_updating = true;
    m_chosen = modes.names[static_cast<std::size_t>(m_column)];
    const int index = m_modeBox->findData(m_chosen);
    if (index >= 0)
        m_modeBox->setCurrentIndex(index);
    const auto mode = modeNamed(m_chosen);
    QColor color = mode ? palette::mode(*mode) : QColor(Qt::black);
    // Text in the mode's colour, darker where the colour is light (ssp's olive would be faint on grey).
    if (0.299 * color.red() + 0.587 * color.green() + 0.114 * color.blue() > 150)
        color = color.darker(150);
    m_modeBox->setStyleSheet(QStringLiteral("QComboBox { color:%1; font-weight:bold; }").arg(color.name()));
    m_description->setText(mode ? description(*mode) : QString());
    m_description->setToolTip(m_description->text());
    updateKnob(modes, maxBackupWorkers, knobsLive);
    // A note (a new mode waits for Reset) takes the description's place; the box's tooltip still describes.
    m_note->setText(note);
    m_note->setToolTip(m_description->text());
    m_note->setVisible(!note.isEmpty());
    m_description->setVisible(note.isEmpty());
    m_updating = false;
}

void ModeColumn::updateKnob(const ColumnModes& modes, int maxBackupWorkers, bool live)
{
    const auto mode = modeNamed(m_chosen);
    const char* option = mode ? knobOption(*mode) : nullptr;
    const bool lambda = mode == Mode::DcAsgd;
    m_knobLabel->setVisible(option != nullptr);
    m_knob->setVisible(option != nullptr && !lambda);
    m_lambda->setVisible(lambda);
    if (!option)
        return;
    const QString tip = Controller::optionHelp(option) + QLatin1Char(' ') + knobWhen(*mode, live);
    m_knobLabel->setText(knobSymbol(*mode) + QStringLiteral(" ="));
    m_knobLabel->setToolTip(tip);
    if (lambda) {
        m_knobLabel->setBuddy(m_lambda);
        m_lambda->setToolTip(tip);
        m_lambda->setValue(modes.dcLambda);
        return;
    }
    m_knobLabel->setBuddy(m_knob);
    m_knob->setToolTip(*mode == Mode::Backup
            ? tip + QLatin1Char(' ') + tr("At most %1 with these workers.").arg(maxBackupWorkers)
            : tip);
    const int low = static_cast<int>(Controller::windowRange(option).first);
    const int most = *mode == Mode::Backup ? maxBackupWorkers : Controller::windowMaximum(option);
    m_knob->setRange(low, std::max(low, most));
    m_knob->setValue(static_cast<int>(knobValue(modes, *mode)));
}

void ModeColumn::refresh(bool everything)
{
    const ModeStatus& status = m_series->status();
    const int workers = std::max(1, static_cast<int>(status.workers.size()));
    m_loss->refresh();
    m_timeline->setWorkers(workers);
    m_timeline->update();
    if (!everything)
        return;
    m_workers->setWorkers(status.workers, status.segmentStart);
    if (syncLikeMode(m_chartsFor)) {
        // Idle on a tiny model is the price of meeting, not a slow worker's: the chart says which.
        const QString name = modeTitle(*modeNamed(m_chartsFor));
        const QString title
            = waitReading(status).overhead ? tr("%1 idle is sync overhead").arg(name) : tr("%1 worker time").arg(name);
        if (m_workers->title() != title)
            m_workers->setTitle(title);
        const auto [labels, counts] = waitBars(status.waitDecades);
        m_histogram->setBins(labels, counts);
        m_trend->refresh();
    } else {
        // As many bars as have room for their labels (about 22 pixels for one number; ranges such as "10-19" need
        // more, so fewer of them), at most 16.
        int bars = std::min(16, static_cast<int>(m_histogram->chartItem()->plotArea().width() / 22));
        auto bins = stalenessBars(status.stalenessCounts, status.stalenessTailFolded, bars);
        while (bins.first.size() > 4 && !m_histogram->labelsFit(bins.first)) {
            bars = static_cast<int>(bins.first.size()) - 1; // (any larger limit gives these same bins)
            bins = stalenessBars(status.stalenessCounts, status.stalenessTailFolded, bars);
        }
        m_histogram->setBins(bins.first, bins.second);
        if (m_trend)
            m_trend->refresh(workers - 1);
        if (m_boundWaits) {
            const auto [waitLabels, waitCounts] = waitBars(status.waitDecades);
            m_boundWaits->setBins(waitLabels, waitCounts);
        }
    }
}

void ModeColumn::setShowTestSet(bool test)
{
    m_showTest = test;
    m_loss->setShowTestSet(test);
}

void ModeColumn::setXAxis(XAxisKind kind)
{
    m_xAxis = kind;
    m_loss->setXAxis(kind);
}

QList<const Exportable*> ModeColumn::exportables() const
{
    if (m_boundWaits)
        return {m_loss, m_workers, m_timeline, m_histogram, m_boundWaits};
    return {m_loss, m_workers, m_timeline, m_histogram, m_trend};
}

} // namespace sgdscope::ui
