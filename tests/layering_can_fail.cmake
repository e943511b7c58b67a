# The layering test's twin: the check must fail on tests/data/layering, a small tree whose every broken include
# says so beside it, and name exactly these lines, no more and no fewer.
#
#   cmake -DCHECK=<tests/layering.cmake> -DROOT=<tests/data/layering> -P tests/layering_can_fail.cmake
cmake_minimum_required(VERSION 3.25)
set(expected
  "app/Main.cpp:2: app may not include \"core/engines/Trainer.h\""
  "core/engines/sim/Actor.h:3: engines may not include \"../../run/Experiment.h\""
  "core/io/Writer.h:3: io may not include \"core/run/Experiment.h\""
  "core/io/Writer.h:5: io may not include \"core/metrics/../run/Experiment.h\""
  "core/nn/Layer.h:5: includes <QString>: core/ is free of Qt"
  "core/widgets/Thing.h: core/ folder 'widgets' is not a layer of the rules"
  "ui/Angle.cpp:4: ui may not include \"core/engines/Trainer.h\""
  "ui/Panel.cpp:2: ui may not include \"core/engines/Trainer.h\""
  "ui/Plot.cpp:4: includes <QChart>: Qt Charts lives only in ui/charts/"
  "ui/Plot.cpp:5: ui may not include \"./core/engines/Trainer.h\""
  "ui/Plot.cpp:6: ui may not include \"ui/../core/engines/Trainer.h\"")
execute_process(COMMAND "${CMAKE_COMMAND}" -DROOT=${ROOT} -P "${CHECK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
message("${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "layering_check_can_fail: the check passed a tree with broken includes")
endif()
string(REPLACE ";" "<semicolon>" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(named 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^(app|ui|core)/")
    math(EXPR named "${named} + 1")
  endif()
endforeach()
foreach(want IN LISTS expected)
  string(REPLACE ";" "<semicolon>" want "${want}")
  set(found FALSE)
  foreach(line IN LISTS lines)
    string(FIND "${line}" "${want}" at)
    if(at EQUAL 0)
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "layering_check_can_fail: the check did not name: ${want}")
  endif()
endforeach()
list(LENGTH expected wanted)
if(NOT named EQUAL wanted)
  message(FATAL_ERROR "layering_check_can_fail: the check named ${named} lines, ${wanted} expected")
endif()
message("layering_check_can_fail: the check failed, naming the ${wanted} broken lines and only those")
