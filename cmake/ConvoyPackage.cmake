# install() rules and the Debian package (CPack's DEB generator); scripts/package drives both.
#
#   /usr/bin/convoy, convoy-worker, convoy-mock   the three executables (convoy finds the other
#                                                 two next to itself, see find_executable)
#   /usr/share/convoy/configs/                    the example configs, with their data files
#   /usr/share/convoy/deploy/                     deploy/: the Kubernetes manifests (and their
#                                                 Dockerfile), the Grafana dashboard
#   /usr/share/convoy/slurm/convoy.sbatch         the Slurm batch script (docs/multi-host.md)
#   /usr/share/doc/convoy/                        README.md and docs/
#
# The docs link to deploy/ and scripts/slurm/, so the package ships them: a user who installed
# the .deb has every file the docs name (scripts/package --check verifies each one).
#
# The package is built from the build it is run in (RelWithDebInfo by default: -O2 -DNDEBUG,
# the flags scripts/test tests) and stripped (CPACK_STRIP_FILES): the same code the tests ran,
# without the debug info. Its dependencies are read off the binaries by dpkg-shlibdeps (dpkg-dev),
# so they name the Debian runtime packages we actually link (libzmq5, libcurl4, libyaml-cpp0.7...).
include(GNUInstallDirs)

# `cmake --install` and cpack install what is built and build nothing themselves: scripts/package
# builds only the three executables, never the tests.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS convoy convoy-worker convoy-mock RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/convoy/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/ DESTINATION ${CMAKE_INSTALL_DATADIR}/convoy/deploy)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/slurm/convoy.sbatch
  DESTINATION ${CMAKE_INSTALL_DATADIR}/convoy/slurm)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME convoy)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "convoy maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "distributed load generator for OpenAI-compatible LLM inference servers")
set(CPACK_PACKAGE_DESCRIPTION
  "convoy replays single- and multi-turn conversations against OpenAI-compatible servers \
(NVIDIA Dynamo, vLLM, SGLang, TensorRT-LLM, llama.cpp) and measures streaming latency. \
Includes convoy-worker and convoy-mock, a Dynamo-like mock server.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # convoy_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
