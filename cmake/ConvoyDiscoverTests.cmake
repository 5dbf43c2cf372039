# Run after each test executable links (cmake -P, from convoy_add_test): lists its doctest test
# cases and writes two CTest files with their labels, which the directory's include script
# (convoy_add_test) chooses between when ctest starts:
#   CTEST_FILE       what `ctest` runs: the cases whose only label is `unit` run together, one
#                    test per source file (named after it, e.g. controller/report/metrics_test.cpp),
#                    every other case is its own test. A process per test case was most of the
#                    unit tier's time (about 80 ms each, against a few ms of testing).
#   CTEST_CASES_FILE every test case its own test, named after it: what CONVOY_TEST_PER_CASE=1
#                    ctest sees, so that `CONVOY_TEST_PER_CASE=1 ctest -R 'case name'` runs one case.
#
# Inputs (-D): TEST_EXECUTABLE, TEST_WORKING_DIR, CTEST_FILE, CTEST_CASES_FILE, TEST_TIMEOUT,
# TEST_SOURCES (the sources, relative to the project and joined by '|'), TEST_LABEL (the
# executable's kind: unit, e2e, ...), TEST_LABEL_RULES: a list of LABEL=FILTER, FILTER a doctest
# wildcard (`*` and `?`) on the source file ("file:*run_protocol_test.cpp") or on the test
# case's name ("name:*a worker killed*"). A test matched by a rule gets that rule's label; a
# `protocol` or `e2e` rule replaces the kind, and `slow` replaces `unit` (so `ctest -L unit` is
# the fast inner loop) but is added beside `protocol` and `e2e`.

function(list_cases out)  # list_cases(VAR [doctest filter args]): the matching test case names
  execute_process(
    COMMAND "${TEST_EXECUTABLE}" ${ARGN} --list-test-cases --no-version
    OUTPUT_VARIABLE output
    RESULT_VARIABLE result
    WORKING_DIRECTORY "${TEST_WORKING_DIR}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${TEST_EXECUTABLE} --list-test-cases failed (${result}):\n${output}")
  endif()
  # Keep ';' out of list splitting: a name containing one would split (and .ci/run forbids it).
  string(REPLACE ";" "\\;" output "${output}")
  string(REPLACE "\n" ";" lines "${output}")
  set(cases)
  foreach(line IN LISTS lines)
    if(line STREQUAL "" OR line MATCHES "^===+$" OR line MATCHES "^\\[doctest\\] ")
      continue()
    endif()
    list(APPEND cases "${line}")
  endforeach()
  set(${out} "${cases}" PARENT_SCOPE)
endfunction()

# A bracket argument, so names with spaces, quotes or '$' reach ctest unchanged. (doctest's
# filters split on ',', so the --test-case filter escapes it with a backslash.)
function(bracket out text)
  set(${out} "[==[${text}]==]" PARENT_SCOPE)
endfunction()

list_cases(all_cases)

# kind_<i>, slow_<i>: test case i's kind (the executable's, then the rules') and slowness.
set(index 0)
foreach(name IN LISTS all_cases)
  set(kind_${index} "${TEST_LABEL}")
  set(slow_${index} FALSE)
  math(EXPR index "${index} + 1")
endforeach()

foreach(rule IN LISTS TEST_LABEL_RULES)
  if(NOT rule MATCHES "^([a-z]+)=(file|name):(.+)$")
    message(FATAL_ERROR "bad label rule '${rule}': want LABEL=file:GLOB or LABEL=name:GLOB")
  endif()
  set(label "${CMAKE_MATCH_1}")
  set(what "${CMAKE_MATCH_2}")
  set(filter "${CMAKE_MATCH_3}")
  if(what STREQUAL "file")
    list_cases(matched "--source-file=${filter}")
  else()
    list_cases(matched "--test-case=${filter}")
  endif()
  if(NOT matched)
    message(FATAL_ERROR "label rule '${rule}' matches no test case of ${TEST_EXECUTABLE}")
  endif()
  foreach(name IN LISTS matched)
    list(FIND all_cases "${name}" at)
    if(label STREQUAL "slow")
      set(slow_${at} TRUE)
    else()
      set(kind_${at} "${label}")
    endif()
  endforeach()
endforeach()

# The labels of test case i.
set(index 0)
foreach(name IN LISTS all_cases)
  set(labels "${kind_${index}}")
  if(slow_${index})
    if(labels STREQUAL "unit")
      set(labels slow)
    else()
      list(APPEND labels slow)
    endif()
  endif()
  set(labels_${index} "${labels}")
  math(EXPR index "${index} + 1")
endforeach()

# doctest's filters split on ',', so a name in a filter escapes it with a backslash.
function(case_filter out name)
  string(REPLACE "," "\\," escaped "${name}")
  set(${out} "${escaped}" PARENT_SCOPE)
endfunction()

# add_test_text(VAR NAME LABELS ARG...): the two lines that add one test.
function(add_test_text out name labels)
  bracket(test_name "${name}")
  set(args "")
  foreach(arg IN LISTS ARGN)
    bracket(quoted "${arg}")
    string(APPEND args " ${quoted}")
  endforeach()
  bracket(dir "${TEST_WORKING_DIR}")
  string(CONCAT text
    "add_test(${test_name} \"${TEST_EXECUTABLE}\"${args})\n"
    "set_tests_properties(${test_name} PROPERTIES WORKING_DIRECTORY ${dir}"
    " TIMEOUT ${TEST_TIMEOUT} LABELS \"${labels}\")\n")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Every case its own test.
set(cases_script "")
set(index 0)
foreach(name IN LISTS all_cases)
  case_filter(filter "${name}")
  add_test_text(text "${name}" "${labels_${index}}" "--test-case=${filter}")
  string(APPEND cases_script "${text}")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${CTEST_CASES_FILE}" "${cases_script}")

# The unit cases of each source file in one process (the other cases of the file excluded by
# name); a case no source file lists (one in a header) and every other case stays its own test.
set(grouped_script "")
string(REPLACE "|" ";" sources "${TEST_SOURCES}")
set(grouped "")
foreach(source IN LISTS sources)
  list_cases(file_cases "--source-file=*${source}")
  set(unit_count 0)
  set(excluded "")
  foreach(name IN LISTS file_cases)
    list(FIND all_cases "${name}" at)
    if(at LESS 0)
      continue()
    endif()
    if(labels_${at} STREQUAL "unit")
      list(APPEND grouped ${at})
      math(EXPR unit_count "${unit_count} + 1")
    else()
      case_filter(filter "${name}")
      list(APPEND excluded "${filter}")
    endif()
  endforeach()
  if(unit_count EQUAL 0)
    continue()
  endif()
  string(REGEX REPLACE "^tests/" "" test_name "${source}")
  set(args "--source-file=*${source}")
  if(excluded)
    string(REPLACE ";" "," excluded "${excluded}")
    list(APPEND args "--test-case-exclude=${excluded}")
  endif()
  add_test_text(text "${test_name}" unit ${args})
  string(APPEND grouped_script "${text}")
endforeach()
set(index 0)
foreach(name IN LISTS all_cases)
  list(FIND grouped ${index} at)
  if(at LESS 0)
    case_filter(filter "${name}")
    add_test_text(text "${name}" "${labels_${index}}" "--test-case=${filter}")
    string(APPEND grouped_script "${text}")
  endif()
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${CTEST_FILE}" "${grouped_script}")
