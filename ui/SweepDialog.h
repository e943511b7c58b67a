#pragma once

#include "ui/SessionData.h"
#include "ui/StudyProcess.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace sgdscope::ui {

/// Run > Sweep...: a study (sgdscope --study) made from the panel's settings: by default the workers from 1 to
/// the panel's count, doubling, for both columns' modes, each point the headless run of the panel's settings (the
/// preset's steps, or those given). It runs as a child process with a progress bar (points done, the time left
/// as the study estimates it); Cancel stops it (finished points are kept), Resume continues it, and when it ends
/// the study's window opens (studyEnded).
class SweepDialog : public QDialog
{
    Q_OBJECT
public:
    SweepDialog(const SessionSettings& settings, const QString& program, QWidget* parent = nullptr);

    /// The study's arguments after --study DIR, as the fields give them.
    QStringList arguments() const;
    QString folder() const;
    void setFolder(const QString& folder);
    void setWorkersAxis(const QString& values);
    void setExtraAxes(const QString& axes);
    void setSteps(int steps);
    void setJobs(int jobs);
    StudyProcess* process() { return &m_process; }
    QString problem() const;

    void start();
    void cancel() { m_process.cancel(); }
    /// Starts the last study again in its folder (it continues where it stopped).
    void resume();

Q_SIGNALS:
    /// The study ended complete or incomplete (not cancelled): its folder.
    void studyEnded(const QString& dir);

private:
    void showProgress(int settled, int total, double eta);
    void ended(int exitCode, const QString& status, const QString& problem);
    void updateButtons();

    SessionSettings m_settings;
    QString m_program;
    StudyProcess m_process;
    QLineEdit* m_folder;
    QLineEdit* m_workers;
    QCheckBox* m_modes[2];
    QLineEdit* m_extraAxes;
    QSpinBox* m_seeds;
    QCheckBox* m_bestOf;
    QCheckBox* m_halving;
    QSpinBox* m_steps;
    QSpinBox* m_jobs;
    QProgressBar* m_progress;
    QLabel* m_state;
    QPushButton* m_start;
    QPushButton* m_cancel;
    QPushButton* m_resume;
    QString m_lastDir;
    QStringList m_lastArgs;
};

} // namespace sgdscope::ui
