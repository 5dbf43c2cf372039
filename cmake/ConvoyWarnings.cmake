# Warnings for convoy's own targets only (never for third-party headers).
include(ConvoyPch)
option(CONVOY_WERROR "Treat warnings as errors on convoy targets" OFF)
# Debug info as line tables only (-g1) in Debug and RelWithDebInfo: file:line in sanitizer
# stack traces, perf and gdb backtraces, at about three quarters of the build time of full -g
# (no variable or type info). OFF restores full debug info.
option(CONVOY_LINE_TABLES "Debug info as line tables only (-g1) on convoy targets" ON)

function(convoy_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
  # GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++'s char_traits for ordinary
  # `"literal" + std::string` (GCC bug 105329, fixed in 13): a false positive that would fail
  # the Release build under -Werror. Off for GCC before 13 only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CONVOY_LINE_TABLES)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Debug,RelWithDebInfo>:-g1>)
  endif()
  if(CONVOY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  convoy_target_pch(${target})
endfunction()
