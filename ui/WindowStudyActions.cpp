#include "ui/WindowStudyActions.h"

#include "ui/ControlPanel.h"
#include "ui/Controller.h"
#include "ui/MainWindow.h"
#include "ui/StudyView.h"
#include "ui/SweepDialog.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>

namespace sgdscope::ui {

void WindowStudyActions::addActions(QMenu* file, QMenu* run)
{
    file->addAction(tr("Open s&tudy..."), m_window, [this] {
        const QString dir = QFileDialog::getExistingDirectory(m_window, tr("Open a study folder (study.json)"));
        if (dir.isEmpty())
            return;
        if (const QString problem = openStudy(dir); !problem.isEmpty())
            QMessageBox::warning(m_window, tr("Open study"), problem);
    });
    QAction* sweep = run->addAction(tr("S&weep..."), m_window, [this] { (void)showSweep(); });
    sweep->setToolTip(tr("A study from the panel's settings: the workers doubling, both columns' modes, and any "
                         "other axis; each point a headless run in a folder of its own."));
}

StudyView* WindowStudyActions::studyView() const
{
    return m_view.data();
}

SweepDialog* WindowStudyActions::sweepDialog() const
{
    return m_sweep.data();
}

QString WindowStudyActions::openStudy(const QString& dir)
{
    StudyView* view = m_view ? m_view.data() : new StudyView(m_window);
    const QString problem = view->load(dir);
    if (!problem.isEmpty()) {
        if (!m_view)
            view->deleteLater();
        return problem;
    }
    if (!m_view) {
        m_view = view;
        QObject::connect(view, &StudyView::runFolderRequested, m_window, [this](const QString& folder) {
            if (const QString why = m_window->openRun(folder); !why.isEmpty())
                QMessageBox::warning(m_window, tr("Open run"), why);
            else
                m_window->raise();
        });
    }
    view->show();
    view->raise();
    return {};
}

SweepDialog* WindowStudyActions::showSweep()
{
    if (m_sweep && m_sweep->process()->running()) {
        m_sweep->show();
        m_sweep->raise();
        return m_sweep;
    }
    if (m_sweep)
        m_sweep->deleteLater();
    m_sweep = new SweepDialog(m_window->panel()->settings(), m_window->controller()->program(), m_window);
    QObject::connect(m_sweep, &SweepDialog::studyEnded, m_window, [this](const QString& dir) {
        if (const QString problem = openStudy(dir); !problem.isEmpty())
            m_window->statusBar()->showMessage(problem, 10000);
    });
    m_sweep->show();
    return m_sweep;
}

} // namespace sgdscope::ui
