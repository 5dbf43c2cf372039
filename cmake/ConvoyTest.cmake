# convoy_add_test(NAME SOURCES a.cpp b.cpp LIBS convoy::x [LABEL unit|e2e] [RULES LABEL=... ...])
# One doctest executable per component (per room in the controller); its TEST_CASEs become CTest
# tests with labels:
#   unit      in-process tests, each well under 2 s: `ctest -L unit` is the inner loop (< 10 s)
#   protocol  tests that talk ZeroMQ between real event loops (the controller's Run and workers)
#   e2e       tests that run the real binaries (convoy, convoy-worker, convoy-mock, nginx)
#   slow      anything that takes over ~2 s; replaces `unit`, is added beside protocol and e2e
# LABEL is the executable's kind (default unit). RULES relabel test cases by source file or by
# name, doctest wildcards: protocol=file:*run_protocol_test.cpp, slow=name:*killed mid-run*.
# See cmake/ConvoyDiscoverTests.cmake, which lists the test cases after each link. `ctest` runs
# the `unit` cases of a source file in one process, a test named after the file (ctest -R
# metrics_test); every other case is a test of its own. CONVOY_TEST_PER_CASE=1 in ctest's
# environment makes every case its own test, named after it:
#   CONVOY_TEST_PER_CASE=1 ctest --test-dir build -R 'the case name'
# (or run the executable: build/tests/controller/controller_report_tests -tc='the case name').

set(CONVOY_TEST_TIMEOUT 300 CACHE STRING "Per-test CTest timeout in seconds")

# doctest's main() is compiled once for every test executable (it is the heaviest translation
# unit of a test binary: ~10 s each).
function(convoy_doctest_main)
  if(NOT TARGET convoy_doctest_main)
    add_library(convoy_doctest_main OBJECT ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
    target_link_libraries(convoy_doctest_main PRIVATE doctest::doctest)
    convoy_test_optimization(convoy_doctest_main)
  endif()
endfunction()

# Test code is compiled at -O1 in optimized builds: the code under test (our libraries) keeps
# the build type's -O2, and the tests compile in about 2/3 of the time (they are 70% of a
# full build).
function(convoy_test_optimization target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>)
endfunction()

function(convoy_add_test name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;LIBS;RULES" ${ARGN})
  convoy_doctest_main()
  add_executable(${name} ${ARG_SOURCES} $<TARGET_OBJECTS:convoy_doctest_main>)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} doctest::doctest)
  convoy_test_optimization(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    CONVOY_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CONVOY_BINARY_DIR="${PROJECT_BINARY_DIR}")
  convoy_target_warnings(${name})
  set_property(TARGET ${name} PROPERTY CONVOY_TEST_TARGET ON)  # its PCH adds doctest
  set(label ${ARG_LABEL})
  if(NOT label)
    set(label unit)
  endif()

  # After every link: list the test cases into the two CTest files this directory includes, the
  # one by source file and the one by test case.
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_tests.cmake")
  set(ctest_cases_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_cases.cmake")
  set(sources "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(source "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    file(RELATIVE_PATH source "${PROJECT_SOURCE_DIR}" "${source}")
    list(APPEND sources "${source}")
  endforeach()
  string(REPLACE ";" "|" sources "${sources}")
  add_custom_command(TARGET ${name} POST_BUILD
    BYPRODUCTS "${ctest_file}" "${ctest_cases_file}"
    COMMAND "${CMAKE_COMMAND}"
      -D "TEST_EXECUTABLE=$<TARGET_FILE:${name}>"
      -D "TEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR}"
      -D "TEST_TIMEOUT=${CONVOY_TEST_TIMEOUT}"
      -D "TEST_LABEL=${label}"
      -D "TEST_LABEL_RULES=${ARG_RULES}"
      -D "TEST_SOURCES=${sources}"
      -D "CTEST_FILE=${ctest_file}"
      -D "CTEST_CASES_FILE=${ctest_cases_file}"
      -P "${PROJECT_SOURCE_DIR}/cmake/ConvoyDiscoverTests.cmake"
    VERBATIM)
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_include.cmake")
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_cases_file}\" AND \"\$ENV{CONVOY_TEST_PER_CASE}\")\n"
    "  include(\"${ctest_cases_file}\")\n"
    "elseif(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
