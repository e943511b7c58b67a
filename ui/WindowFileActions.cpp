#include "ui/WindowFileActions.h"

#include "ui/ControlPanel.h"
#include "ui/MainWindow.h"
#include "ui/RunFolder.h"
#include "ui/StudyFolder.h"
#include "ui/TrainingSession.h"
#include "ui/WindowOptions.h"

#include "core/run/DataSource.h"
#include "core/run/Experiment.h"
#include "core/run/Options.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>

#include <algorithm>

namespace sgdscope::ui {

void WindowFileActions::addActions(QMenu* file)
{
    QAction* open = file->addAction(tr("&Open run..."), m_window, [this] {
        const QString folder
            = QFileDialog::getExistingDirectory(m_window, tr("Open a run folder (summary.json, metrics.csv)"));
        if (folder.isEmpty() || !mayReplaceTheRun(folder))
            return;
        const QString problem = openRun(folder);
        if (!problem.isEmpty())
            QMessageBox::warning(m_window, tr("sgdscope"), problem);
    });
    open->setShortcut(QKeySequence::Open);
    auto openDataWith = [this](const QString& path) {
        if (path.isEmpty())
            return;
        const QString problem = openData(path);
        if (!problem.isEmpty())
            QMessageBox::warning(m_window, tr("Open data"), problem);
    };
    file->addAction(tr("Open &data (CSV file)..."), m_window, [this, openDataWith] {
        openDataWith(QFileDialog::getOpenFileName(
            m_window, tr("Open a CSV file to train on"), QString(), tr("CSV files (*.csv *.txt);;All files (*)")));
    });
    file->addAction(tr("Open data (&IDX folder)..."), m_window, [this, openDataWith] {
        openDataWith(QFileDialog::getExistingDirectory(
            m_window, tr("Open a folder of IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, ...)")));
    });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    QObject::connect(m_recentMenu, &QMenu::aboutToShow, m_window, [this] { fillRecentMenu(); });
    QAction* save = file->addAction(tr("&Save run as..."), m_window, [this] {
        const QString folder = QFileDialog::getSaveFileName(m_window, tr("Save the session as a run folder"),
            QDir(QSettings().value(QStringLiteral("exportFolder"), QDir::homePath()).toString())
                .filePath(QStringLiteral("run")),
            QString(), nullptr, QFileDialog::ShowDirsOnly | QFileDialog::DontConfirmOverwrite);
        if (folder.isEmpty())
            return;
        const QString problem = saveRun(folder);
        if (!problem.isEmpty())
            QMessageBox::warning(m_window, tr("Save run as"), problem);
        else
            m_window->statusBar()->showMessage(tr("Saved the run to %1").arg(QDir::toNativeSeparators(folder)), 8000);
    });
    save->setShortcut(QKeySequence::SaveAs);
}

QString WindowFileActions::openRun(const QString& folder)
{
    LoadedRun loaded;
    try {
        loaded = loadRunFolder(folder);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    const QString absolute = QDir(folder).absolutePath();
    m_window->showRunFolder(absolute, loaded);
    addRecent(absolute);
    return {};
}

QString WindowFileActions::openData(const QString& path)
{
    ControlPanel* panel = m_window->panel();
    Controller* controller = m_window->controller();
    SessionSettings s = panel->settings();
    static const QStringList dataOptions {QStringLiteral("data"), QStringLiteral("dataset"), QStringLiteral("samples"),
        QStringLiteral("targets"), QStringLiteral("csv-header")};
    s.options.removeIf([](const QPair<QString, QString>& o) { return dataOptions.contains(o.first); });
    s.options.append({QStringLiteral("data"), QFileInfo(path).absoluteFilePath()});
    s.batch = 0; // the preset's batch ...
    // Loads it and builds the model now, with headless's loaders and checks: a bad file changes nothing.
    QApplication::setOverrideCursor(Qt::WaitCursor);
    MetricsBatch first;
    try {
        (void)cachedData(*controller->dataCache(), sessionConfig(s));
        // ... or the whole set, if the preset's batch (fashion-mnist's 256) is larger than the data.
        const Controller::PresetInfo info = Controller::presetInfo(s.preset, s.options, controller->dataCache().get());
        if (info.trainSamples > 0 && info.batch > info.trainSamples)
            s.batch = static_cast<int>(info.trainSamples);
        if (s.batchPerWorker && info.trainSamples > 0) // each worker's share of that batch
            s.batch = std::max(1, static_cast<int>(std::min<std::int64_t>(info.batch, info.trainSamples) / s.workers));
        first = previewSession(controller->dataCache(), s);
    } catch (const std::exception& e) {
        first.error = QString::fromUtf8(e.what());
    }
    QApplication::restoreOverrideCursor();
    for (const QString& model : {QStringLiteral("layers"), QStringLiteral("model")}) {
        if (!first.error.isEmpty() && !s.option(model).isEmpty())
            first.error += tr(" (--%1 %2 is the command line's: it stays for new data)").arg(model, s.option(model));
    }
    if (!first.error.isEmpty())
        return tr("Could not open %1 as data: %2").arg(QDir::toNativeSeparators(path), first.error);
    m_window->adoptOpenedData(s, first);
    addRecent(QFileInfo(path).absoluteFilePath());
    return {};
}

QString WindowFileActions::openPath(const QString& path)
{
    const QFileInfo info(path);
    if (!info.exists())
        return tr("'%1' does not exist").arg(path);
    if (info.isDir() && QFileInfo::exists(QDir(path).filePath(QStringLiteral("summary.json"))))
        return openRun(path);
    if (info.isDir() && isStudyFolder(path))
        return m_window->openStudy(path);
    return openData(path);
}

QString WindowFileActions::saveRun(const QString& folder)
{
    if (!m_window->viewingFolder().isEmpty())
        return tr("The window shows the run folder %1, which is saved already; Save run as... saves a session "
                  "trained in the window")
            .arg(QDir::toNativeSeparators(m_window->viewingFolder()));
    const Controller* controller = m_window->controller();
    try {
        SessionRecord record;
        const SessionSettings& s = controller->startedSettings();
        std::int64_t updates = 0; // the sync column's, as Copy command line (none without one)
        record.command = controller->reproducingCommand(nullptr, &updates);
        const RunConfig config = headlessConfig(s, s.engine == QStringLiteral("mpi") ? 0 : updates);
        record.config = configJson(config);
        // The data set's figures from the loaded data (not loaded again: it may be large, or moved since).
        record.dataset = Json::object();
        record.dataset["name"] = toString(config.dataset);
        if (const auto loaded = findCachedData(*controller->dataCache(), config)) {
            record.dataset["train_samples"] = loaded->train.size();
            if (loaded->test)
                record.dataset["test_samples"] = loaded->test->size();
            record.dataset["parameters"] = parameterCount(config, loaded->train); // as the run built it
        }
        record.engine = s.engine;
        record.modes = s.modes;
        record.workers = s.workers;
        record.batch = config.batch;
        record.accum = s.accum;
        for (int m = 0; m < modeCount; ++m)
            record.digests[static_cast<std::size_t>(m)] = controller->digest(m);
        record.running = controller->state() == Controller::State::Running;
        saveRunFolder(folder, {&m_window->series(LeftColumn), &m_window->series(RightColumn)}, record);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    addRecent(QFileInfo(folder).absoluteFilePath());
    return {};
}

QStringList WindowFileActions::recentPaths()
{
    return QSettings().value(QStringLiteral("recent")).toStringList();
}

void WindowFileActions::addRecent(const QString& path)
{
    QStringList recent = recentPaths();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > 10)
        recent.removeLast();
    QSettings().setValue(QStringLiteral("recent"), recent);
}

void WindowFileActions::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = recentPaths();
    if (recent.isEmpty())
        m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
    for (const QString& path : recent) {
        const bool run = QFileInfo::exists(QDir(path).filePath(QStringLiteral("summary.json")));
        QAction* a = m_recentMenu->addAction(
            (run ? tr("run: %1") : tr("data: %1")).arg(QFileInfo(path).fileName()), m_window, [this, path] {
                if (!mayReplaceTheRun(path))
                    return;
                const QString problem = openPath(path);
                if (!problem.isEmpty())
                    QMessageBox::warning(m_window, tr("sgdscope"), problem);
            });
        a->setToolTip(QDir::toNativeSeparators(path));
    }
}

bool WindowFileActions::mayReplaceTheRun(const QString& path)
{
    const bool runFolder = QFileInfo::exists(QDir(path).filePath(QStringLiteral("summary.json")));
    const auto state = m_window->controller()->state();
    if (!runFolder || state == Controller::State::Idle || state == Controller::State::Failed)
        return true; // data applies on Reset; nothing is lost
    return QMessageBox::question(m_window, tr("sgdscope"),
               tr("Showing %1 ends the run in progress (save it first with File > Save run as...). Go on?")
                   .arg(QDir::toNativeSeparators(path)))
        == QMessageBox::Yes;
}

void WindowFileActions::dragEnter(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.front().isLocalFile())
        event->acceptProposedAction();
}

void WindowFileActions::drop(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.front().isLocalFile())
        return;
    event->acceptProposedAction();
    if (!mayReplaceTheRun(urls.front().toLocalFile()))
        return;
    const QString problem = openPath(urls.front().toLocalFile());
    if (!problem.isEmpty())
        QMessageBox::warning(m_window, tr("sgdscope"), problem);
}

} // namespace sgdscope::ui
