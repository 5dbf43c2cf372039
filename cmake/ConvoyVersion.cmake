# convoy::build_info: the version and the git commit the binaries were built from, read by every
# executable's --version ("convoy 0.1.0 (git abc1234)"). The declarations are in
# common/build_info.hpp; the definitions are generated.
#
# The commit is read at build time, not at configure time: the convoy_git_commit target runs
# cmake/ConvoyGitCommit.cmake on every build, and that script rewrites the generated .cpp only
# when the commit changed. So a new commit relinks the binaries without a re-configure, and a
# build with no new commit rebuilds nothing (Ninja restats the byproduct).
find_package(Git QUIET)
set(convoy_build_info_cpp ${PROJECT_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(convoy_git_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${convoy_build_info_cpp}
          -DVERSION=${PROJECT_VERSION} -DGIT=${GIT_EXECUTABLE}
          -P ${CMAKE_CURRENT_LIST_DIR}/ConvoyGitCommit.cmake
  BYPRODUCTS ${convoy_build_info_cpp}
  VERBATIM)
add_library(convoy_build_info STATIC ${convoy_build_info_cpp})
add_library(convoy::build_info ALIAS convoy_build_info)
add_dependencies(convoy_build_info convoy_git_commit)
target_include_directories(convoy_build_info PUBLIC ${PROJECT_SOURCE_DIR})
convoy_target_warnings(convoy_build_info)
