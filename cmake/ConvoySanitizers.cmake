# CONVOY_SANITIZE=address,undefined builds everything with those sanitizers.
set(CONVOY_SANITIZE "" CACHE STRING "Comma-separated sanitizers (e.g. address,undefined)")

if(CONVOY_SANITIZE)
  message(STATUS "convoy: sanitizers ${CONVOY_SANITIZE}")
  add_compile_options(-fsanitize=${CONVOY_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${CONVOY_SANITIZE})
endif()
