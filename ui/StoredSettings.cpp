#include "ui/StoredSettings.h"

#include "ui/Controller.h"
#include "ui/ModeChoice.h"

#include <QSettings>

namespace sgdscope::ui {

SessionSettings storedSessionSettings(SessionSettings s)
{
    QSettings settings;
    s.preset = settings.value(QStringLiteral("preset"), SessionSettings().preset).toString();
    if (!Controller::presetNames().contains(s.preset))
        s.preset = QStringLiteral("parabola");
    s.workers = settings.value(QStringLiteral("workers"), s.workers).toInt();
    s.batch = settings.value(QStringLiteral("batch"), 0).toInt();
    s.accum = settings.value(QStringLiteral("accum"), s.accum).toInt();
    s.learningRate = settings.value(QStringLiteral("learningRate"), 0.0).value<double>();
    s.slowWorker = settings.value(QStringLiteral("slowWorker"), s.slowWorker).toInt();
    s.slowFactor = settings.value(QStringLiteral("slowFactor"), s.slowFactor).value<double>();
    s.jitter = settings.value(QStringLiteral("jitter"), s.jitter).value<double>();
    s.seed = settings.value(QStringLiteral("seed"), 0).toULongLong();
    s.lockFree = settings.value(QStringLiteral("lockFree"), false).toBool();
    s.pushLearningRate = settings.value(QStringLiteral("pushLearningRate"), s.pushLearningRate).toString();
    s.topology = settings.value(QStringLiteral("topology"), s.topology).toString();
    s.batchPerWorker = settings.value(QStringLiteral("batchPerWorker"), false).toBool();
    s.targetAccuracy = settings.value(QStringLiteral("targetAccuracy"), -1.0).value<double>();
    s.targetLoss = settings.value(QStringLiteral("targetLoss"), -1.0).value<double>();
    s.engine = settings.value(QStringLiteral("engine"), s.engine).toString();
    s.cluster = settings.value(QStringLiteral("cluster"), s.cluster).toString();
    s.platformFile = settings.value(QStringLiteral("platformFile"), QString()).toString();
    s.hostFile = settings.value(QStringLiteral("hostFile"), QString()).toString();
    // The columns' modes: two different ones the window knows, else the defaults.
    const ColumnModes defaults;
    const QStringList names = settings.value(QStringLiteral("modes")).toStringList();
    if (names.size() == modeCount && names[0] != names[1] && modeNamed(names[0]) && modeNamed(names[1]))
        s.modes.names = {names[0], names[1]};
    s.modes.sspBound = settings.value(QStringLiteral("sspBound"), defaults.sspBound).toInt();
    s.modes.backupWorkers = settings.value(QStringLiteral("backupWorkers"), defaults.backupWorkers).toInt();
    s.modes.localSteps = settings.value(QStringLiteral("localSteps"), defaults.localSteps).toInt();
    s.modes.dcLambda = settings.value(QStringLiteral("dcLambda"), defaults.dcLambda).value<double>();
    // What the knobs' boxes offer (a stored lambda of -1 would show 0.000 and fail at Start).
    s.modes = knobsInWindowRange(s.modes);
    return s;
}

void storeSessionSettings(const SessionSettings& s)
{
    QSettings settings;
    settings.setValue(QStringLiteral("preset"), s.preset);
    settings.setValue(QStringLiteral("workers"), s.workers);
    settings.setValue(QStringLiteral("batch"), s.batch);
    settings.setValue(QStringLiteral("accum"), s.accum);
    settings.setValue(QStringLiteral("learningRate"), s.learningRate);
    settings.setValue(QStringLiteral("slowWorker"), s.slowWorker);
    settings.setValue(QStringLiteral("slowFactor"), s.slowFactor);
    settings.setValue(QStringLiteral("jitter"), s.jitter);
    settings.setValue(QStringLiteral("seed"), static_cast<qulonglong>(s.seed));
    settings.setValue(QStringLiteral("lockFree"), s.lockFree);
    settings.setValue(QStringLiteral("pushLearningRate"), s.pushLearningRate);
    settings.setValue(QStringLiteral("topology"), s.topology);
    settings.setValue(QStringLiteral("batchPerWorker"), s.batchPerWorker);
    settings.setValue(QStringLiteral("targetAccuracy"), s.targetAccuracy);
    settings.setValue(QStringLiteral("targetLoss"), s.targetLoss);
    settings.setValue(QStringLiteral("engine"), s.engine);
    settings.setValue(QStringLiteral("cluster"), s.cluster);
    settings.setValue(QStringLiteral("platformFile"), s.platformFile);
    settings.setValue(QStringLiteral("hostFile"), s.hostFile);
    settings.setValue(QStringLiteral("modes"), QStringList {s.modes.names[LeftColumn], s.modes.names[RightColumn]});
    settings.setValue(QStringLiteral("sspBound"), s.modes.sspBound);
    settings.setValue(QStringLiteral("backupWorkers"), s.modes.backupWorkers);
    settings.setValue(QStringLiteral("localSteps"), s.modes.localSteps);
    settings.setValue(QStringLiteral("dcLambda"), s.modes.dcLambda);
}

} // namespace sgdscope::ui
