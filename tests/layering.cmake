# The layering test: every #include of app/, ui/ and core/'s folders must run downward, as DESIGN.md's import
# direction says. Fails naming each file, line and include that breaks a rule.
#
#   cmake -DROOT=<source tree> -P tests/layering.cmake
#
# The rules (a layer may include its own folder and these):
#   app     -> ui, run
#   ui      -> run, metrics, io            (never engines, train, nn or data)
#   run     -> everything in core
#   engines -> train, nn, data, metrics
#   train   -> nn, data
#   metrics -> (nothing else)
#   io      -> metrics, nn
#   nn      -> (nothing else)
#   data    -> io
# and every layer may include core/common (below).
#
# The one exception, and its reason: core/common/ is the floor every layer stands on, app/ included. It holds the
# one error type core throws at its API boundary (SgdError, which the front ends catch and print), named-value
# tables and portable math, and includes nothing above itself. DESIGN lists common for every layer but app; a
# front end that could not name the error it catches would have to catch everything.
#
# Also: Qt Charts is included only in ui/charts/ (STYLE.md: a later move to Qt Graphs touches one folder), and
# core/ includes no Qt at all.
cmake_minimum_required(VERSION 3.25)
if(NOT ROOT OR NOT IS_ABSOLUTE "${ROOT}" OR NOT IS_DIRECTORY "${ROOT}")
  message(FATAL_ERROR "layering.cmake: pass -DROOT=<source tree> as an absolute path to a folder (got '${ROOT}')")
endif()

set(allowed_app ui run common)
set(allowed_ui run metrics io common)
set(allowed_run nn data train engines metrics io common)
set(allowed_engines train nn data metrics common)
set(allowed_train nn data common)
set(allowed_metrics common)
set(allowed_io metrics nn common)
set(allowed_nn common)
set(allowed_data io common)
set(allowed_common "")
set(core_layers run engines train metrics io nn data common)

# The layer of a path relative to ROOT ("app/main.cpp" -> app, "core/nn/kernels/Isa.h" -> nn); empty if none.
function(layer_of path out)
  set(result "")
  if(path MATCHES "^app/")
    set(result app)
  elseif(path MATCHES "^ui/")
    set(result ui)
  elseif(path MATCHES "^core/([^/]+)/")
    set(folder "${CMAKE_MATCH_1}")
    if(folder IN_LIST core_layers)
      set(result "${folder}")
    else()
      set(result "unknown:${folder}")
    endif()
  elseif(path MATCHES "^core/[^/]+$")
    set(result "unknown:(core/ itself)") # a file beside the layers belongs to none
  endif()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources RELATIVE "${ROOT}" "${ROOT}/app/*.h" "${ROOT}/app/*.cpp" "${ROOT}/ui/*.h" "${ROOT}/ui/*.cpp"
     "${ROOT}/core/*.h" "${ROOT}/core/*.cpp")
list(SORT sources)
set(broken 0)
set(checked 0)
foreach(file IN LISTS sources)
  layer_of("${file}" from)
  if(from STREQUAL "")
    continue()
  endif()
  if(from MATCHES "^unknown:(.*)$")
    message("${file}: core/ folder '${CMAKE_MATCH_1}' is not a layer of the rules (tests/layering.cmake): add it there")
    math(EXPR broken "${broken} + 1")
    continue()
  endif()
  get_filename_component(dir "${file}" DIRECTORY)
  # Read whole and split on newlines (file(STRINGS) would take a ';' or an unclosed '[' in a comment as list
  # syntax, merging lines and hiding an include): brackets and semicolons are masked first.
  file(READ "${ROOT}/${file}" content)
  string(REPLACE "\\" "<backslash>" content "${content}") # a line ending in \ would escape the next ';'
  string(REPLACE ";" "<semicolon>" content "${content}")
  string(REPLACE "[" "<open>" content "${content}")
  string(REPLACE "]" "<close>" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
      continue()
    endif()
    set(quote "${CMAKE_MATCH_1}")
    set(include "${CMAKE_MATCH_2}")
    math(EXPR checked "${checked} + 1")
    cmake_path(SET normalized NORMALIZE "${include}")
    if(quote STREQUAL "<" AND NOT normalized MATCHES "^(app|ui|core)/")
      if(include MATCHES "^(QtCharts|QChart|QValueAxis|QLogValueAxis|QLineSeries|QBarSeries|QAreaSeries|QScatterSeries|QBarSet|QCategoryAxis|QBarCategoryAxis|QXYSeries|QStackedBarSeries|QHorizontal|QLegend|QAbstractAxis|QAbstractSeries|QAbstractBarSeries|QSplineSeries|QPieSeries|QPieSlice|QDateTimeAxis|QPolarChart|QBoxPlotSeries|QBoxSet|QCandlestick|QPercentBarSeries|QVXYModelMapper|QHXYModelMapper)"
         AND NOT file MATCHES "^ui/charts/")
        message("${file}:${n}: includes <${include}>: Qt Charts lives only in ui/charts/")
        math(EXPR broken "${broken} + 1")
      elseif(include MATCHES "^Q[A-Za-z]|^Qt" AND file MATCHES "^core/")
        message("${file}:${n}: includes <${include}>: core/ is free of Qt")
        math(EXPR broken "${broken} + 1")
      endif()
      continue()
    endif()
    # Where the compiler finds it: a quoted include next to the file first, then from the source root (which is on
    # the include path, also for <>); "./" and "../" resolved either way, so "core/metrics/../run/X.h" is run's.
    cmake_path(SET from_root NORMALIZE "${include}")
    cmake_path(SET from_file NORMALIZE "${dir}/${include}")
    if(quote STREQUAL "\"" AND EXISTS "${ROOT}/${from_file}")
      set(target "${from_file}")
    elseif(from_root MATCHES "^(app|ui|core)/" OR EXISTS "${ROOT}/${from_root}" OR quote STREQUAL "<")
      set(target "${from_root}")
    else()
      set(target "${from_file}")
    endif()
    layer_of("${target}" to)
    if(to STREQUAL "" OR to STREQUAL from)
      continue()
    endif()
    if(NOT to IN_LIST allowed_${from})
      string(REPLACE ";" ", " allowed "${allowed_${from}}")
      message("${file}:${n}: ${from} may not include \"${include}\" (from core/${to}/); ${from} may include ${allowed}")
      math(EXPR broken "${broken} + 1")
    endif()
  endforeach()
endforeach()

list(LENGTH sources files)
if(files EQUAL 0)
  message(FATAL_ERROR "layering: no source file under '${ROOT}' (app/, ui/, core/): a check that reads nothing checks "
                      "nothing")
endif()
if(broken GREATER 0)
  message(FATAL_ERROR "layering: ${broken} include(s) break the import direction (of ${checked} in ${files} files)")
endif()
message("layering: ${checked} includes in ${files} files run downward")
