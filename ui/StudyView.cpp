#include "ui/StudyView.h"

#include "ui/charts/StudyChart.h"

#include <QDesktopServices>
#include <QDir>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <cmath>
#include <exception>

namespace sgdscope::ui {

namespace {
QString figure(double v)
{
    if (!std::isfinite(v))
        return {};
    // (samples per second in whole numbers: 133832, not 1.3383e+05)
    return std::abs(v) >= 1e4 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 5);
}
} // namespace

StudyView::StudyView(QWidget* parent)
    : QWidget(parent, Qt::Window)
    , m_summary(new QLabel)
    , m_chartArea(new QWidget)
    , m_grid(new QGridLayout(m_chartArea))
    , m_table(new QTableWidget)
{
    setAttribute(Qt::WA_DeleteOnClose);
    resize(1280, 900);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* reload = new QPushButton(tr("&Reload"));
    reload->setToolTip(tr("Read the study's folder again (a study still running, or resumed)"));
    connect(reload, &QPushButton::clicked, this, [this] { (void)load(m_study.dir); });
    auto* openFolder = new QPushButton(tr("Open &folder"));
    connect(openFolder, &QPushButton::clicked, this,
        [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_study.dir)); });
    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(reload);
    top->addWidget(openFolder);

    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_chartArea);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->setToolTip(tr("The kept points (with --best-of: each combination at its chosen value). Double-click a row "
                           "to open its run folder."));
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const QTableWidgetItem* item = m_table->item(row, 0);
        if (item)
            Q_EMIT runFolderRequested(QDir(m_study.dir).filePath(item->data(Qt::UserRole).toString()));
    });
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(scroll);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({680, 180});
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
}

QString StudyView::load(const QString& dir)
{
    LoadedStudy loaded;
    try {
        loaded = loadStudyFolder(dir);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    m_study = std::move(loaded);
    setWindowTitle(tr("sgdscope — study %1").arg(QDir(m_study.dir).dirName()));
    QString text = tr("<b>%1</b> — %2: %3 of %4 points finished")
                       .arg(QDir::toNativeSeparators(m_study.dir).toHtmlEscaped(), m_study.status)
                       .arg(m_study.finished)
                       .arg(m_study.total);
    text += QStringLiteral("<br><tt>%1</tt>").arg(m_study.command.toHtmlEscaped());
    // A few choices are listed; many (a scaling study has a dozen or more) are counted by value in one line, the
    // list in the tooltip: the table's chosen column and the chosen-value chart say where each went.
    constexpr qsizetype listedChoices = 4;
    if (m_study.choices.size() <= listedChoices) {
        for (const QString& choice : m_study.choices)
            text += QStringLiteral("<br>") + tr("chosen: %1").arg(choice.toHtmlEscaped());
    } else {
        QStringList values;
        for (const QString& v : m_study.chosenValues) {
            if (!values.contains(v))
                values << v;
        }
        QStringList counts;
        for (const QString& v : values)
            counts << tr("%1 (%2 of %3)").arg(v).arg(m_study.chosenValues.count(v)).arg(m_study.choices.size());
        const qsizetype open = m_study.choices.size() - m_study.chosenValues.size();
        text += QStringLiteral("<br>")
            + tr("chosen %1: %2%3; the table's chosen column says where")
                  .arg(m_study.bestOf.toHtmlEscaped(), counts.join(QStringLiteral(", ")).toHtmlEscaped(),
                      open > 0 ? tr(", %1 without a choice").arg(open) : QString());
    }
    for (const QString& note : m_study.notes)
        text += QStringLiteral("<br><i>%1</i>").arg(note.toHtmlEscaped());
    if (m_study.figures.empty())
        text += QStringLiteral("<br>") + tr("No charts: the study has no numeric axis, or no point has finished yet.");
    m_summary->setText(text);
    m_summary->setToolTip(m_study.choices.size() > listedChoices ? m_study.choices.join(QLatin1Char('\n')) : QString());

    qDeleteAll(m_charts);
    m_charts.clear();
    for (const StudyFigure& f : m_study.figures) {
        auto* chart = new StudyChart(f);
        chart->setMinimumHeight(340);
        connect(chart, &StudyChart::pointClicked, this,
            [this](const QString& folder) { Q_EMIT runFolderRequested(QDir(m_study.dir).filePath(folder)); });
        const int i = static_cast<int>(m_charts.size());
        m_grid->addWidget(chart, i / 2, i % 2);
        m_charts << chart;
    }
    fillTable();
    return {};
}

void StudyView::fillTable()
{
    const StudyTable& t = m_study.table;
    QStringList headers;
    for (const StudyAxis& a : t.axes)
        headers << QString::fromStdString(a.name);
    if (!t.bestOf.empty())
        headers << tr("%1 (chosen)").arg(QString::fromStdString(t.bestOf));
    if (t.seeds)
        headers << tr("seed");
    headers << tr("status") << (t.target ? tr("to target") : tr("seconds")) << tr("final loss") << tr("accuracy")
            << tr("samples/s") << tr("idle") << tr("staleness");
    m_table->clear();
    m_table->setColumnCount(static_cast<int>(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    int rows = 0;
    for (const StudyTable::Row& row : t.rows)
        rows += row.kept ? 1 : 0;
    m_table->setRowCount(rows);
    int r = 0;
    for (const StudyTable::Row& row : t.rows) {
        if (!row.kept)
            continue;
        QStringList cells;
        for (const std::string& v : row.values)
            cells << QString::fromStdString(v);
        if (!t.bestOf.empty())
            cells << QString::fromStdString(row.candidate);
        if (t.seeds)
            cells << QString::fromStdString(row.seed);
        cells << QString::fromUtf8(statusName(row.status));
        if (row.result) {
            const PointResult& p = *row.result;
            cells << figure(t.target ? (p.secondsToTarget >= 0 ? p.secondsToTarget : NAN) : p.seconds)
                  << figure(p.finalLoss) << figure(p.accuracy >= 0 ? p.accuracy : NAN) << figure(p.samplesPerSecond)
                  << figure(p.idleFraction) << figure(p.meanStaleness);
        }
        for (int c = 0; c < static_cast<int>(cells.size()); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 0)
                item->setData(Qt::UserRole, QStringLiteral("points/") + QString::fromStdString(row.id));
            m_table->setItem(r, c, item);
        }
        ++r;
    }
    // A column without any value (accuracy without classes) is left out of sight.
    for (int c = 0; c < m_table->columnCount(); ++c) {
        bool any = false;
        for (int r2 = 0; r2 < m_table->rowCount() && !any; ++r2)
            any = m_table->item(r2, c) && !m_table->item(r2, c)->text().isEmpty();
        m_table->setColumnHidden(c, !any && m_table->rowCount() > 0);
    }
    m_table->resizeColumnsToContents();
}

} // namespace sgdscope::ui
