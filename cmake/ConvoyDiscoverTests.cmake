# Run after each test executable links (cmake -P, from convoy_add_test): lists its doctest test
# cases and writes a CTest file adding each as its own test with its labels.
#
# Inputs (-D): TEST_EXECUTABLE, TEST_WORKING_DIR, CTEST_FILE, TEST_TIMEOUT, TEST_LABEL (the
# executable's kind: unit or e2e), TEST_LABEL_RULES: a list of LABEL=FILTER, FILTER a doctest
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

set(script "")
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
  string(REPLACE "," "\\," filter_name "${name}")
  bracket(test_name "${name}")
  bracket(test_arg "--test-case=${filter_name}")
  bracket(dir "${TEST_WORKING_DIR}")
  string(APPEND script
    "add_test(${test_name} \"${TEST_EXECUTABLE}\" ${test_arg})\n"
    "set_tests_properties(${test_name} PROPERTIES WORKING_DIRECTORY ${dir}"
    " TIMEOUT ${TEST_TIMEOUT} LABELS \"${labels}\")\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
