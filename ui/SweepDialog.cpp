#include "ui/SweepDialog.h"

#include "ui/Controller.h"
#include "ui/WindowOptions.h"

#include <QCheckBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace sgdscope::ui {

namespace {

QString timeText(double seconds)
{
    if (seconds < 90)
        return QObject::tr("%1 s").arg(std::max(1, static_cast<int>(seconds + 0.5)));
    if (seconds < 5400)
        return QObject::tr("%1 min").arg(static_cast<int>(seconds / 60 + 0.5));
    return QObject::tr("%1 h").arg(seconds / 3600, 0, 'f', 1);
}

/// The panel's count as a doubling range from the first power of two above the straggler's index (a slow worker
/// must exist at every point), ending on the count itself.
QString defaultWorkers(const SessionSettings& s)
{
    int first = 1;
    while (s.slowWorker >= first && s.slowFactor > 1.0)
        first *= 2;
    const int last = std::max(first, s.workers);
    QString text = QStringLiteral("%1..%2").arg(first).arg(last);
    int top = first;
    while (top * 2 <= last)
        top *= 2;
    if (top != last)
        text += QStringLiteral(",%1").arg(last);
    return text;
}

} // namespace

SweepDialog::SweepDialog(const SessionSettings& settings, const QString& program, QWidget* parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_program(program)
    , m_folder(new QLineEdit)
    , m_workers(new QLineEdit(defaultWorkers(settings)))
    , m_extraAxes(new QLineEdit)
    , m_seeds(new QSpinBox)
    , m_bestOf(new QCheckBox(tr("each mode at its own best learning rate (--best-of lr: 7 rates, a factor 2 apart)")))
    , m_halving(new QCheckBox(tr("stop clearly worse rates early (--halving: successive halving)")))
    , m_steps(new QSpinBox)
    , m_jobs(new QSpinBox)
    , m_progress(new QProgressBar)
    , m_state(new QLabel)
    , m_start(new QPushButton(tr("&Start")))
    , m_cancel(new QPushButton(tr("&Cancel study")))
    , m_resume(new QPushButton(tr("&Resume")))
{
    setWindowTitle(tr("Sweep — a study from the panel's settings"));
    const QString base
        = QSettings()
              .value(QStringLiteral("studyFolder"), QDir::home().filePath(QStringLiteral("sgdscope-studies")))
              .toString();
    m_folder->setText(QDir(base).filePath(
        QStringLiteral("sweep-") + QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
    auto* browse = new QPushButton(tr("Browse..."));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir
            = QFileDialog::getExistingDirectory(this, tr("The study's folder (new, empty, or this study's)"));
        if (!dir.isEmpty())
            m_folder->setText(dir);
    });
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(browse);
    m_workers->setToolTip(tr("Values separated by commas; A..B doubles from A up to B"));
    auto* modes = new QHBoxLayout;
    for (int c = 0; c < 2; ++c) {
        m_modes[c] = new QCheckBox(settings.modes.names[static_cast<std::size_t>(c)]);
        m_modes[c]->setChecked(true);
        modes->addWidget(m_modes[c]);
    }
    modes->addStretch(1);
    m_extraAxes->setPlaceholderText(tr("e.g. cluster=datacenter,wan jitter=0,0.2"));
    m_extraAxes->setToolTip(tr("More axes, each NAME=VALUES, separated by spaces: every combination is a point"));
    m_seeds->setRange(1, 20);
    m_seeds->setToolTip(tr("Each point with this many seeds: the charts show their band and median"));
    m_halving->setEnabled(false);
    connect(m_bestOf, &QCheckBox::toggled, m_halving, &QCheckBox::setEnabled);
    m_steps->setRange(0, 100000000);
    m_steps->setSpecialValueText(tr("the preset's"));
    m_jobs->setRange(1, 256);
    m_jobs->setValue(settings.engine == QStringLiteral("sim") ? Controller::machineCores() : 1);
    m_jobs->setToolTip(
        tr("Points run at once; points on this machine's threads always run alone (they time the cores)"));

    auto* form = new QFormLayout;
    form->addRow(tr("Folder:"), folderRow);
    form->addRow(tr("Workers:"), m_workers);
    form->addRow(tr("Modes:"), modes);
    form->addRow(tr("More axes:"), m_extraAxes);
    form->addRow(tr("Seeds:"), m_seeds);
    form->addRow(QString(), m_bestOf);
    form->addRow(QString(), m_halving);
    form->addRow(tr("Steps per run:"), m_steps);
    form->addRow(tr("Points at once:"), m_jobs);
    auto* note = new QLabel(tr("Each point is a headless run of the panel's settings (%1) in a run folder of its own.")
                                .arg(sessionDataName(settings)));
    note->setWordWrap(true);
    m_state->setWordWrap(true);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_start, QDialogButtonBox::ActionRole);
    buttons->addButton(m_cancel, QDialogButtonBox::ActionRole);
    buttons->addButton(m_resume, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    connect(m_start, &QPushButton::clicked, this, &SweepDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, &SweepDialog::cancel);
    connect(m_resume, &QPushButton::clicked, this, &SweepDialog::resume);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(m_progress);
    layout->addWidget(m_state);
    layout->addWidget(buttons);
    connect(&m_process, &StudyProcess::progressed, this, &SweepDialog::showProgress);
    connect(&m_process, &StudyProcess::ended, this, &SweepDialog::ended);
    if (settings.engine == QStringLiteral("mpi"))
        m_state->setText(tr("A study's points are processes of their own: MPI sessions cannot be swept from the "
                            "window. Pick the simulated cluster or this machine's threads."));
    updateButtons();
}

QString SweepDialog::folder() const
{
    return m_folder->text().trimmed();
}

void SweepDialog::setFolder(const QString& folder)
{
    m_folder->setText(folder);
}

void SweepDialog::setWorkersAxis(const QString& values)
{
    m_workers->setText(values);
}

void SweepDialog::setExtraAxes(const QString& axes)
{
    m_extraAxes->setText(axes);
}

void SweepDialog::setSteps(int steps)
{
    m_steps->setValue(steps);
}

void SweepDialog::setJobs(int jobs)
{
    m_jobs->setValue(jobs);
}

QString SweepDialog::problem() const
{
    return m_state->text();
}

QStringList SweepDialog::arguments() const
{
    // The panel's headless run without its folder, its worker count and its modes: the axes give those.
    QStringList base = headlessArguments(m_settings, m_steps->value(), QStringLiteral("-"));
    base = base.mid(3); // --headless --out -
    QStringList args;
    for (qsizetype i = 0; i < base.size(); ++i) {
        if ((base[i] == QStringLiteral("--workers") || base[i] == QStringLiteral("--mode")) && i + 1 < base.size()) {
            ++i;
            continue;
        }
        args << base[i];
    }
    args << QStringLiteral("--sweep") << QStringLiteral("workers=") + m_workers->text().trimmed();
    QStringList modes;
    for (const QCheckBox* box : m_modes) {
        if (box->isChecked())
            modes << box->text();
    }
    if (modes.size() == 1)
        args << QStringLiteral("--mode") << modes.front();
    else if (!modes.isEmpty())
        args << QStringLiteral("--sweep") << QStringLiteral("mode=") + modes.join(QLatin1Char(','));
    for (const QString& axis : m_extraAxes->text().split(QLatin1Char(' '), Qt::SkipEmptyParts))
        args << QStringLiteral("--sweep") << axis;
    if (m_seeds->value() > 1)
        args << QStringLiteral("--seeds") << QString::number(m_seeds->value());
    if (m_bestOf->isChecked()) {
        args << QStringLiteral("--best-of") << QStringLiteral("lr");
        if (m_halving->isChecked())
            args << QStringLiteral("--halving") << QStringLiteral("3");
    }
    args << QStringLiteral("--jobs") << QString::number(m_jobs->value());
    return args;
}

void SweepDialog::start()
{
    if (m_process.running() || m_settings.engine == QStringLiteral("mpi"))
        return;
    m_lastDir = folder();
    m_lastArgs = arguments();
    QSettings().setValue(QStringLiteral("studyFolder"), QFileInfo(m_lastDir).absolutePath());
    m_state->setText(tr("Checking every point..."));
    m_process.start(m_program, m_lastDir, m_lastArgs);
    updateButtons();
}

void SweepDialog::resume()
{
    if (m_process.running() || m_lastDir.isEmpty())
        return;
    m_state->setText(tr("Resuming: finished points are kept..."));
    m_process.start(m_program, m_lastDir, m_lastArgs);
    updateButtons();
}

void SweepDialog::showProgress(int settled, int total, double eta)
{
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(settled);
    QString text = tr("%1 of %2 points").arg(settled).arg(total);
    if (eta >= 0 && settled < total)
        text += tr(", about %1 left").arg(timeText(eta));
    m_state->setText(text);
}

void SweepDialog::ended(int exitCode, const QString& status, const QString& problem)
{
    if (status == QStringLiteral("interrupted"))
        m_state->setText(tr("Cancelled: %1 of %2 points settled; the finished ones are kept, Resume continues.")
                             .arg(m_process.settled())
                             .arg(m_process.total()));
    else if (status.isEmpty())
        m_state->setText(
            tr("The study did not run: %1").arg(problem.isEmpty() ? tr("exit code %1").arg(exitCode) : problem));
    else
        m_state->setText(status == QStringLiteral("complete")
                ? tr("Done: every point finished.")
                : tr("Incomplete: some points failed or were lost; Resume runs them again."));
    updateButtons();
    if (status == QStringLiteral("complete") || status == QStringLiteral("incomplete"))
        Q_EMIT studyEnded(m_lastDir);
}

void SweepDialog::updateButtons()
{
    const bool running = m_process.running();
    const bool mpi = m_settings.engine == QStringLiteral("mpi");
    m_start->setEnabled(!running && !mpi);
    m_cancel->setEnabled(running);
    m_resume->setEnabled(!running && !m_lastDir.isEmpty());
}

} // namespace sgdscope::ui
