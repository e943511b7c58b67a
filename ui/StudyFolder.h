#pragma once

#include "core/run/study/StudyFigures.h"
#include "core/run/study/StudyTable.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace sgdscope::ui {

/// A study's folder (sgdscope --study DIR) as the window shows it: its table and charts read back from its
/// study.json (core/run/study/StudyTable.h: the same figures its PNG charts were drawn from), what ran and how
/// far it got. Throws SgdError naming the file and what is wrong with it.
struct LoadedStudy
{
    QString dir; // absolute
    QString command; // as typed
    QString status; // running | complete | incomplete | interrupted
    int total = 0;
    int finished = 0;
    QStringList notes;
    StudyTable table;
    std::vector<StudyFigure> figures;
    /// The chosen --best-of value per combination ("mode=sync, workers=8: lr 0.02"), when there is one.
    QStringList choices;
    QString bestOf; // the --best-of option ("lr"), "" without
    QStringList chosenValues; // the values chosen, one per combination that has one
};
LoadedStudy loadStudyFolder(const QString& dir);

/// Whether a folder holds a study (a study.json).
bool isStudyFolder(const QString& dir);

} // namespace sgdscope::ui
