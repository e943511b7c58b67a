// Controller's questions that need no session: the presets, the machine's cores and the option table's ranges
// and help, as the panel's controls offer them.
#include "ui/Controller.h"

#include "ui/TrainingSession.h"

#include "core/run/ConfigBuilder.h"
#include "core/run/DataSource.h"
#include "core/run/Experiment.h"
#include "core/run/Options.h"
#include "core/run/RunConfig.h"

#include <QFileInfo>

#include <algorithm>
#include <thread>

namespace sgdscope::ui {

QStringList Controller::presetNames()
{
    QStringList names;
    for (const auto& n : sgdscope::presetNames())
        names << QString::fromStdString(n);
    return names;
}

Controller::PresetInfo Controller::presetInfo(
    const QString& name, const QList<QPair<QString, QString>>& options, DataCache* cache)
{
    PresetInfo info;
    info.name = name;
    try {
        SessionSettings settings;
        settings.preset = name;
        settings.options = options;
        settings.options.removeIf([](const QPair<QString, QString>& o) { return o.first == QStringLiteral("slow"); });
        settings.workers = 1; // (the model and data do not depend on the workers)
        const RunConfig c = sessionOptionsConfig(settings);
        info.trainSamples = trainingSetSize(c);
        const auto data = cache ? findCachedData(*cache, c) : nullptr;
        if (data)
            info.trainSamples = data->train.size();
        // as prepareRun builds the model
        const QString model = QString::fromStdString(modelSummary(c, data ? &data->train : nullptr));
        info.batch = c.batch > 0 ? c.batch : static_cast<int>(info.trainSamples);
        info.learningRate = c.lr;
        info.classification = c.loss == LossKind::SoftmaxCrossEntropy;
        const QString dataName = c.data.empty()
            ? QString::fromStdString(toString(c.dataset))
            : QStringLiteral("%1 (%2)").arg(
                QFileInfo(QString::fromStdString(c.data)).fileName(), QString::fromStdString(toString(c.dataset)));
        // (The learning rate has a slider of its own: the preset's would contradict it.)
        info.summary = QStringLiteral("%1: %2, %3%4")
                           .arg(dataName, model, QString::fromStdString(toString(c.loss)))
                           .arg(c.momentum > 0 ? QStringLiteral(", momentum %1").arg(c.momentum) : QString());
    } catch (const std::exception& e) {
        info.problem = QString::fromUtf8(e.what());
        info.summary = info.problem;
    }
    return info;
}

int Controller::machineCores()
{
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::pair<double, double> Controller::windowRange(const char* name)
{
    const OptionSpec& spec = option(name);
    if (spec.windowLow != 0.0 || spec.windowHigh != 0.0)
        return {spec.windowLow, spec.windowHigh};
    return {spec.min, spec.max};
}

QString Controller::optionHelp(const char* name)
{
    return QString::fromStdString(option(name).help);
}

int Controller::windowMaximum(const char* name)
{
    const OptionSpec& spec = option(name);
    return spec.windowMax > 0 ? spec.windowMax : static_cast<int>(spec.max);
}

} // namespace sgdscope::ui
