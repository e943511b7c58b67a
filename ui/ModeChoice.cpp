#include "ui/ModeChoice.h"

#include "ui/Controller.h"

#include "core/common/Error.h"
#include "core/run/EngineShapes.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

namespace sgdscope::ui {

std::optional<Mode> modeNamed(const QString& name)
{
    return valueNamed(modeNames, name.toStdString());
}

Mode columnMode(const ColumnModes& modes, int column)
{
    const QString& name = modes.names[static_cast<std::size_t>(column)];
    if (const auto m = modeNamed(name))
        return *m;
    throw SgdError("the window's " + std::string(column == LeftColumn ? "left" : "right") + " column has mode '"
        + name.left(40).toStdString() + "'; use one of " + modeNameList().join(QStringLiteral(", ")).toStdString());
}

QStringList modeNameList()
{
    // Sync and async first, then the modes between them from sync's end (backup, local-sgd) to async's.
    QStringList names;
    for (const Mode m : {Mode::Sync, Mode::Async, Mode::Backup, Mode::LocalSgd, Mode::Ssp, Mode::DcAsgd})
        names << QString::fromUtf8(modeName(m));
    return names;
}

bool syncLikeMode(const QString& name)
{
    const auto m = modeNamed(name);
    return m && isSyncLike(*m);
}

bool teamWideColumn(const SessionSettings& settings)
{
    return syncLikeMode(settings.modes.names[LeftColumn]) || syncLikeMode(settings.modes.names[RightColumn]);
}

int mpiColumnWorkers(const ColumnModes& modes, const QList<int>& columns, int column, int processes)
{
    const auto nameAt = [&](int c) { return modes.names[static_cast<std::size_t>(c)]; };
    const auto m = modeNamed(nameAt(column));
    if (!m)
        return processes;
    const bool backupInJob
        = std::any_of(columns.begin(), columns.end(), [&](int c) { return modeNamed(nameAt(c)) == Mode::Backup; });
    return mpiJobWorkers(*m, processes, mpiDefaultTopology(*m, backupInJob));
}

const char* knobOption(Mode m)
{
    switch (m) {
    case Mode::Ssp:
        return "ssp-bound";
    case Mode::Backup:
        return "backup-workers";
    case Mode::LocalSgd:
        return "local-steps";
    case Mode::DcAsgd:
        return "dc-lambda";
    case Mode::Sync:
    case Mode::Async:
        break;
    }
    return nullptr;
}

QString knobSymbol(Mode m)
{
    switch (m) {
    case Mode::Ssp:
        return QStringLiteral("S");
    case Mode::Backup:
        return QStringLiteral("B");
    case Mode::LocalSgd:
        return QStringLiteral("H");
    case Mode::DcAsgd:
        return QStringLiteral("\u03bb");
    case Mode::Sync:
    case Mode::Async:
        break;
    }
    return {};
}

double knobValue(const ColumnModes& modes, Mode m)
{
    switch (m) {
    case Mode::Ssp:
        return modes.sspBound;
    case Mode::Backup:
        return modes.backupWorkers;
    case Mode::LocalSgd:
        return modes.localSteps;
    case Mode::DcAsgd:
        return modes.dcLambda;
    case Mode::Sync:
    case Mode::Async:
        break;
    }
    return 0.0;
}

void setKnobValue(ColumnModes& modes, Mode m, double value)
{
    switch (m) {
    case Mode::Ssp:
        modes.sspBound = static_cast<int>(value);
        break;
    case Mode::Backup:
        modes.backupWorkers = static_cast<int>(value);
        break;
    case Mode::LocalSgd:
        modes.localSteps = static_cast<int>(value);
        break;
    case Mode::DcAsgd:
        modes.dcLambda = value;
        break;
    case Mode::Sync:
    case Mode::Async:
        break;
    }
}

double knobInWindowRange(Mode m, double value)
{
    const char* option = knobOption(m);
    if (!option)
        return value;
    const auto [low, high] = Controller::windowRange(option);
    const int boxEnd = Controller::windowMaximum(option);
    const double most = boxEnd > 0 ? std::min<double>(high, boxEnd) : high;
    return std::isnan(value) ? low : std::clamp(value, low, most);
}

ColumnModes knobsInWindowRange(ColumnModes modes)
{
    for (const Mode m : {Mode::Ssp, Mode::Backup, Mode::LocalSgd, Mode::DcAsgd})
        setKnobValue(modes, m, knobInWindowRange(m, knobValue(modes, m)));
    return modes;
}

QString knobText(const ColumnModes& modes, Mode m)
{
    return m == Mode::DcAsgd ? QString::number(modes.dcLambda, 'g', QLocale::FloatingPointShortest)
                             : QString::number(static_cast<int>(knobValue(modes, m)));
}

QString knobLabel(const ColumnModes& modes, Mode m)
{
    if (!knobOption(m))
        return {};
    const QString value
        = m == Mode::DcAsgd ? QString::number(modes.dcLambda, 'g', 3) : QString::number(knobValue(modes, m));
    return knobSymbol(m) + QLatin1Char('=') + value;
}

int maxBackupWorkers(const SessionSettings& settings)
{
    const int workers
        = settings.engine == QStringLiteral("mpi") ? mpiJobWorkers(Mode::Backup, settings.workers) : settings.workers;
    return std::max(0, workers - 1);
}

bool needsParameterServerOnMpi(Mode m)
{
    return mpiJobWorkers(m, 2) < 2;
}

QList<int> mpiRunnableColumns(const SessionSettings& settings)
{
    QList<int> columns;
    for (int c = 0; c < modeCount; ++c) {
        const auto m = modeNamed(settings.modes.names[static_cast<std::size_t>(c)]);
        if (settings.workers >= 2 || (m && !needsParameterServerOnMpi(*m)))
            columns << c;
    }
    return columns;
}

} // namespace sgdscope::ui
