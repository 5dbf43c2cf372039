# convoy_add_test(NAME SOURCES a.cpp b.cpp LIBS convoy::x [LABEL unit|e2e] [RULES LABEL=... ...])
# One doctest executable per component; each TEST_CASE becomes a CTest test with labels:
#   unit      in-process tests, each well under 2 s: `ctest -L unit` is the inner loop (< 10 s)
#   protocol  tests that talk ZeroMQ between real event loops (the controller's Run and workers)
#   e2e       tests that run the real binaries (convoy, convoy-worker, convoy-mock, nginx)
#   slow      anything that takes over ~2 s; replaces `unit`, is added beside protocol and e2e
# LABEL is the executable's kind (default unit). RULES relabel test cases by source file or by
# name, doctest wildcards: protocol=file:*run_protocol_test.cpp, slow=name:*killed mid-run*.
# See cmake/ConvoyDiscoverTests.cmake, which lists the test cases after each link.

set(CONVOY_TEST_TIMEOUT 300 CACHE STRING "Per-test CTest timeout in seconds")

function(convoy_add_test name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;LIBS;RULES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} doctest::doctest)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    CONVOY_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CONVOY_BINARY_DIR="${PROJECT_BINARY_DIR}")
  convoy_target_warnings(${name})
  set(label ${ARG_LABEL})
  if(NOT label)
    set(label unit)
  endif()

  # After every link: list the test cases into a CTest file that this directory includes.
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_tests.cmake")
  add_custom_command(TARGET ${name} POST_BUILD
    BYPRODUCTS "${ctest_file}"
    COMMAND "${CMAKE_COMMAND}"
      -D "TEST_EXECUTABLE=$<TARGET_FILE:${name}>"
      -D "TEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR}"
      -D "TEST_TIMEOUT=${CONVOY_TEST_TIMEOUT}"
      -D "TEST_LABEL=${label}"
      -D "TEST_LABEL_RULES=${ARG_RULES}"
      -D "CTEST_FILE=${ctest_file}"
      -P "${PROJECT_SOURCE_DIR}/cmake/ConvoyDiscoverTests.cmake"
    VERBATIM)
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_include.cmake")
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
