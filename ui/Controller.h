#pragma once

#include "ui/SessionData.h"

#include <QObject>
#include <QThread>
#include <QTimer>

#include <array>
#include <memory>
#include <vector>

namespace sgdscope::ui {

struct SessionShared;
struct DataCache;
class ExternalRun;

/// The one bridge between the window and core. It owns the background thread that drives both columns' trainers
/// (runTrainingSession: alternating short time slices of the two modes, each on its own clock) and
/// hands results to the GUI as copied values.
///
/// Threading: every public method is for the GUI thread. Pause and stop are atomics set by direct calls
/// and checked by the training thread between slices (its loop blocks for the whole run, so a queued slot
/// would never be delivered). The training thread appends to the staging buffer of its own session; a GUI
/// timer swaps out the current session's buffer about 30 times a second and emits metricsReady() once per
/// tick. Reset never waits for the old run: it is told to stop and finishes in the background, and since
/// only the current session's buffer is ever read, nothing of a reset run reaches the window.
///
/// Controller.cpp has the session's lifetime and the draining; the first look, the external runs (a simulated
/// cluster's child, an MPI job) and the questions that need no session have files of their own
/// (ControllerFirstLook.cpp, ControllerExternalRun.cpp, ControllerOptions.cpp).
class Controller : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        Idle,
        Loading,
        Running,
        Paused,
        Finished,
        Failed
    };
    Q_ENUM(State)

    explicit Controller(QObject* parent = nullptr);
    ~Controller() override;

    /// Changes the settings. Workers, batch, micro-batches, learning rate, straggler, jitter, how pushes apply
    /// (lock or lock-free, lr or lr / staleness) and the modes' knobs (S, B, H, lambda) reach a running session
    /// from its next update (and are marked on the charts); preset, seed, engine and the columns' modes need a reset
    /// (restartNeeded(true) says so).
    void setSettings(const SessionSettings& settings);
    const SessionSettings& settings() const { return m_settings; }
    /// The settings the current run started with (or last applied live).
    const SessionSettings& runningSettings() const { return m_running; }

    void start(); // new run, or resume when paused
    void pause();
    void togglePause(); // Space: start, pause or resume
    void reset(); // stop and clear; the next start begins afresh
    State state() const { return m_state; }

    /// Drains the staging buffer now (the timer does this ~30 times a second).
    void drain();
    /// Background threads that have not finished yet (the current run and any stopping ones).
    int liveThreads() const;
    /// Blocks until every background thread has finished (tests, shutdown).
    void waitForThreads();

    /// The sgdscope executable that external runs start (a simulated cluster's session child, MPI's
    /// processes); by default this program.
    void setProgram(const QString& path) { m_program = path; }
    /// That executable (a study of Run > Sweep... runs it too).
    QString program() const;
    /// Where the current MPI run writes its results (empty for the other engines).
    QString runFolder() const { return m_runFolder; }
    /// The command line of the current external run (empty for the threads engine).
    QString externalCommand() const;

    static int machineCores();
    /// The largest value the window offers for an option (its slider's end): the option table's.
    static int windowMaximum(const char* option);
    /// The window's range for a number option (its windowLow/windowHigh, else its allowed range).
    static std::pair<double, double> windowRange(const char* option);
    /// An option's one line of --help (the window's tooltips for controls that set it).
    static QString optionHelp(const char* option);

    struct PresetInfo
    {
        QString name;
        std::int64_t trainSamples = 0; // 0 if unknown (data set not installed, or a file not loaded yet)
        int batch = 0; // the preset's
        double learningRate = 0.0;
        QString summary; // one line: model, data, optimiser
        bool classification = false;
        QString problem; // the session's run options do not resolve: why
    };
    static QStringList presetNames();
    /// What a preset with the session's run options trains (`cache`: data loaded already, for its size).
    static PresetInfo presetInfo(
        const QString& name, const QList<QPair<QString, QString>>& options = {}, DataCache* cache = nullptr);
    const std::shared_ptr<DataCache>& dataCache() const { return m_cache; }
    /// Takes data sets loaded already (the command line's, checked before the window opened).
    void adoptDataCache(std::shared_ptr<DataCache> cache) { m_cache = std::move(cache); }

    /// The headless command that repeats the current session from its start (the settings it started with),
    /// for the sync updates done so far; `liveChanges` says how many changes made during the run it leaves
    /// out. Empty before the first Start.
    QString reproducingCommand(int* liveChanges = nullptr, std::int64_t* syncUpdates = nullptr) const;
    /// The settings the current session started with (before any live change).
    const SessionSettings& startedSettings() const { return m_started; }
    /// Each mode's parameter digest (summary.json's params_digest), as of the last pause; empty if none.
    QString digest(int mode) const { return m_digests[static_cast<std::size_t>(mode)]; }
    /// A first look taken already for the current settings (the window's command line and Open data check
    /// the settings that way): shown instead of taking it again.
    void adoptFirstLook(const MetricsBatch& batch);
    /// The first look is taken while idle unless the window shows something else (a run folder).
    void setPreviewEnabled(bool enabled);
    /// Each mode's updates as of its last status.
    std::int64_t updates(int mode) const { return m_updates[static_cast<std::size_t>(mode)]; }

signals:
    void metricsReady(const sgdscope::ui::MetricsBatch& batch);
    void stateChanged(sgdscope::ui::Controller::State state);
    void restartNeeded(bool needed);
    void cleared(); // after reset: views drop their data
    void errorOccurred(const QString& message);
    /// The first look could not be taken (e.g. the data set is missing): why. Nothing was running.
    void previewFailed(const QString& message);

private:
    void setState(State state);
    void stopCurrent();
    void reapFinishedThreads();
    void startExternal();
    void externalEnded(int exitCode, bool crashed);
    void handleBatch(MetricsBatch& batch);
    /// The first look: while idle, the initial parameters' losses on the current settings, in the background.
    void preview();
    /// Starts the first look's thread once the settings have rested (m_previewTimer).
    void takeFirstLook();
    void previewDone();

    SessionSettings m_settings;
    SessionSettings m_running;
    State m_state = State::Idle;
    std::shared_ptr<SessionShared> m_session;
    std::shared_ptr<DataCache> m_cache;
    std::unique_ptr<QThread> m_thread;
    std::vector<std::unique_ptr<QThread>> m_stopping; // told to stop, not finished yet
    std::unique_ptr<ExternalRun> m_external; // a simulated cluster or an MPI job, in other processes
    std::vector<std::unique_ptr<ExternalRun>> m_stoppingExternal;
    QStringList m_externalNotes; // said once when an external run starts
    QString m_program;
    QString m_runFolder;
    QTimer m_timer;
    SessionSettings m_started;
    int m_liveChanges = 0;
    std::array<QString, modeCount> m_digests;
    std::array<std::int64_t, modeCount> m_updates {};
    struct Preview;
    std::shared_ptr<Preview> m_preview; // the newest first look (a reset or a new one drops it)
    QString m_previewKey; // what it was for
    QTimer m_previewTimer; // a first look waits for the settings to rest (typing a seed is one first look)
    bool m_previewEnabled = true;
};

} // namespace sgdscope::ui
