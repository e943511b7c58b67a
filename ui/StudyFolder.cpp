#include "ui/StudyFolder.h"

#include "core/common/Error.h"
#include "core/io/Files.h"

#include <QDir>
#include <QFileInfo>

namespace sgdscope::ui {

bool isStudyFolder(const QString& dir)
{
    return QFileInfo(QDir(dir).filePath(QStringLiteral("study.json"))).isFile();
}

LoadedStudy loadStudyFolder(const QString& dir)
{
    LoadedStudy s;
    s.dir = QDir(dir).absolutePath();
    const std::string path = QDir(s.dir).filePath(QStringLiteral("study.json")).toStdString();
    if (!isStudyFolder(dir))
        throw SgdError("'" + dir.toStdString() + "' is not a study folder: it has no study.json");
    const Json study = parseJson(readFile(path, "study file", 1ULL << 30), path);
    if (!study.is_object())
        throw SgdError(path + ": not a JSON object");
    auto text = [&](const char* key) {
        const Json* v = member(study, key);
        return v && v->is_string() ? QString::fromStdString(v->get<std::string>()) : QString();
    };
    auto number = [&](const char* key) {
        const Json* v = member(study, key);
        return v && v->is_number_integer() ? v->get<int>() : 0;
    };
    s.command = text("command");
    s.status = text("status");
    s.total = number("points_total");
    s.finished = number("points_finished");
    if (const Json* notes = member(study, "notes"); notes && notes->is_array()) {
        for (const Json& n : *notes) {
            if (n.is_string())
                s.notes << QString::fromStdString(n.get<std::string>());
        }
    }
    s.table = readTable(study, path);
    s.figures = studyFigures(s.table);
    if (const Json* best = member(study, "best_of"); best && best->is_object()) {
        const std::string name = member(*best, "name") ? best->at("name").get<std::string>() : "";
        s.bestOf = QString::fromStdString(name);
        if (const Json* groups = member(*best, "groups"); groups && groups->is_array()) {
            for (const Json& g : *groups) {
                QString where;
                if (const Json* values = member(g, "group"); values && values->is_object()) {
                    for (const auto& [key, value] : values->items())
                        where += (where.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(key)
                            + QLatin1Char('=')
                            + QString::fromStdString(value.is_string() ? value.get<std::string>() : "");
                }
                const Json* chosen = member(g, "chosen");
                // A group without a choice in a study that ended: its points were skipped or none finished.
                const QString none = s.status == QStringLiteral("complete") ? QStringLiteral("(none: no candidate ran)")
                                                                            : QStringLiteral("(not decided yet)");
                s.choices << QStringLiteral("%1: %2 %3")
                                 .arg(where.isEmpty() ? QStringLiteral("every point") : where,
                                     QString::fromStdString(name),
                                     chosen && chosen->is_string() ? QString::fromStdString(chosen->get<std::string>())
                                                                   : none);
                if (chosen && chosen->is_string())
                    s.chosenValues << QString::fromStdString(chosen->get<std::string>());
            }
        }
    }
    return s;
}

} // namespace sgdscope::ui
