# convoy_add_test(NAME SOURCES a.cpp b.cpp LIBS convoy_x [LABELS l])
# One doctest executable per component; each TEST_CASE becomes a CTest test.
include(doctest)

function(convoy_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} doctest::doctest)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    CONVOY_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CONVOY_BINARY_DIR="${PROJECT_BINARY_DIR}")
  convoy_target_warnings(${name})
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  doctest_discover_tests(${name} PROPERTIES LABELS "${labels}" TIMEOUT 300)
endfunction()
