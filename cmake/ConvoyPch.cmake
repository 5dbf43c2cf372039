# Precompiled headers for convoy's own targets. Most of a translation unit's compile time is
# the front end reading the same third-party and standard headers (msgpack alone is ~1.5 s of
# CPU in each of the ~110 translation units that include proto/messages.hpp): each target
# compiles them once into a PCH instead. Off by default under ccache, which cannot cache
# through a PCH without extra sloppiness settings; the fresh-clone CI build has no ccache.
set(convoy_pch_default ON)
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache" OR "$ENV{CMAKE_CXX_COMPILER_LAUNCHER}" MATCHES "ccache")
  set(convoy_pch_default OFF)
endif()
option(CONVOY_PCH "Precompiled headers (standard library, msgpack, rapidjson) on convoy targets"
       ${convoy_pch_default})
# Unity builds: CMake compiles each target's sources in batches of 8, one translation unit per
# batch, so the templates every file instantiates (msgpack's codecs, rapidjson, std::string and
# the containers) are compiled and optimised once per batch instead of once per file; on top of
# the PCH that halves a fresh build's CPU (controller/run/ 35.9 -> 13.5 CPU-s). Off under
# ccache with the PCH, where a one-file edit should recompile one file. Every source must
# therefore compile beside its neighbours: no two files of a target may give one name to
# different things in their anonymous namespaces (the shared test helpers in tests/*.hpp exist
# partly for this).
option(CONVOY_UNITY "Unity builds (8 sources per translation unit) on convoy targets"
       ${convoy_pch_default})
set(CONVOY_UNITY_BATCH 8 CACHE STRING "Sources per unity translation unit (0: a whole target in one; finds every clash)")

set(CONVOY_PCH_HEADERS
  <algorithm> <array> <atomic> <chrono> <cstdint> <cstring> <filesystem> <functional> <map>
  <memory> <mutex> <optional> <sstream> <string> <string_view> <thread> <unordered_map>
  <utility> <vector>
  <msgpack.hpp> <rapidjson/document.h> <rapidjson/stringbuffer.h> <rapidjson/writer.h>)

function(convoy_target_pch target)
  get_target_property(type ${target} TYPE)
  if(CONVOY_UNITY AND NOT type STREQUAL "INTERFACE_LIBRARY")
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${CONVOY_UNITY_BATCH})
    # A class in a source file whose member's type sits in that file's anonymous namespace is
    # fine; GCC's -Wsubobject-linkage exists for the same pattern in a header, and a unity
    # batch #includes each source, so every source looks like a header to it.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
  if(CONVOY_PCH)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      set_property(GLOBAL APPEND PROPERTY CONVOY_PCH_TARGETS ${target})  # convoy_apply_pch
      # GCC 12 reports -Warray-bounds, -Wstringop-overflow and -Wstringop-overread inside
      # libstdc++'s char_traits (a memcpy "writing 244 bytes into a region of size 16") for
      # ordinary string concatenation once <string> comes from a PCH: the false-positive family
      # of the -Wrestrict one in ConvoyWarnings.cmake (GCC bugs 105329, 105651), seen in three
      # of our files and only with a PCH. Builds without one (ccache) keep the warnings.
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
        target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                               -Wno-stringop-overread)
      endif()
    endif()
  endif()
endfunction()

# Called once, after every target exists: one PCH per group of targets whose flags agree, the
# others reuse it (REUSE_FROM), instead of one per target (22 PCHs took a quarter of a fresh
# unity build's CPU). Two groups: our libraries and executables (-O2 in optimized builds), and
# the test executables (-O1, CONVOY_SOURCE_DIR, doctest). The definitions that used to differ
# between libraries (MSGPACK_NO_BOOST, BOOST_BEAST_USE_STD_STRING_VIEW) are set for the whole
# project in the top-level CMakeLists.txt. Flags that disagree anyway fail the build loudly:
# CMake adds -Winvalid-pch and convoy targets build with -Werror in CI.
function(convoy_apply_pch)
  if(NOT CONVOY_PCH)
    return()
  endif()
  get_property(targets GLOBAL PROPERTY CONVOY_PCH_TARGETS)
  set(owner_lib "")
  set(owner_test "")
  foreach(target IN LISTS targets)
    get_target_property(is_test ${target} CONVOY_TEST_TARGET)
    if(is_test)
      if(owner_test STREQUAL "")
        set(owner_test ${target})
        target_precompile_headers(${target} PRIVATE ${CONVOY_PCH_HEADERS} <doctest/doctest.h>)
      else()
        target_precompile_headers(${target} REUSE_FROM ${owner_test})
      endif()
    else()
      if(owner_lib STREQUAL "")
        set(owner_lib ${target})
        target_precompile_headers(${target} PRIVATE ${CONVOY_PCH_HEADERS})
      else()
        target_precompile_headers(${target} REUSE_FROM ${owner_lib})
      endif()
    endif()
  endforeach()
endfunction()
