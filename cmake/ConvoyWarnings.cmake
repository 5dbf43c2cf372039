# Warnings for convoy's own targets only (never for third-party headers).
option(CONVOY_WERROR "Treat warnings as errors on convoy targets" OFF)

function(convoy_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
  if(CONVOY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
