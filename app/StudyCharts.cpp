#include "app/StudyCharts.h"

#include "core/run/study/StudyFigures.h"
#include "ui/charts/StudyChart.h"

#include <QApplication>
#include <QString>
#include <QStringList>

namespace sgdscope {

StudyChartWriter studyChartWriter()
{
    return [](const std::string& dir, const StudyTable& table) {
        static int argc = 1;
        static char name[] = "sgdscope";
        static char* argv[] = {name, nullptr};
        static QApplication* app = QApplication::instance() ? nullptr : new QApplication(argc, argv);
        (void)app;
        std::vector<std::string> problems;
        for (const QString& p : ui::writeStudyCharts(QString::fromStdString(dir), studyFigures(table)))
            problems.push_back(p.toStdString());
        return problems;
    };
}

} // namespace sgdscope
