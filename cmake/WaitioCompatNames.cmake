# WaitioCompatNames.cmake — the original WaitIO's build names, installed (docs/user-guide.md, "The
# original's build names"). Its users' makefiles link `-lwaitio_<platform> -lwaitio_mpi_<platform>`
# and their job scripts start `waitio-serv-<platform>` (e.g. _intel, _a64fx): for each entry of
# WAITIO_COMPAT_PLATFORMS, `cmake --install` creates those names beside libwaitio and waitio-serv
# (links, and a GNU ld script for libwaitio_mpi_<platform>, which brings the platform's MPI
# adapter), so that such a link line works after only its -L path changes. The work is done by
# tools/waitio-compat-names, installed too, which a site runs later to add its own names.
# Included from the top-level CMakeLists.txt after adapters/ and tools/ (it needs the adapter
# names and waitio-serv).
set(WAITIO_COMPAT_PLATFORMS "intel;a64fx" CACHE STRING
    "Platform names of the original WaitIO to install link and waitio-serv names for: a list of PLATFORM or PLATFORM=ADAPTER (an MPI adapter's name, or none); empty: none")

# A bare PLATFORM gets the adapter of the first MPI found (adapters/CMakeLists.txt: the ones named
# in WAITIO_MPI_COMPILERS, else find_package(MPI)'s: the platform's own MPI on a site's build).
set(WAITIO_COMPAT_DEFAULT_ADAPTER none)
if(WAITIO_ADAPTER_NAMES)
  list(GET WAITIO_ADAPTER_NAMES 0 WAITIO_COMPAT_DEFAULT_ADAPTER)
endif()

foreach(spec ${WAITIO_COMPAT_PLATFORMS})
  if(NOT spec MATCHES "^([A-Za-z0-9_.+-]+)(=([A-Za-z0-9_]+))?$")
    message(FATAL_ERROR "WaitIO: WAITIO_COMPAT_PLATFORMS entry '${spec}' is not PLATFORM or PLATFORM=ADAPTER")
  endif()
  if(CMAKE_MATCH_3 AND NOT CMAKE_MATCH_3 STREQUAL "none" AND NOT CMAKE_MATCH_3 IN_LIST WAITIO_ADAPTER_NAMES)
    message(FATAL_ERROR "WaitIO: WAITIO_COMPAT_PLATFORMS entry '${spec}' names the MPI adapter "
                        "'${CMAKE_MATCH_3}', which this build does not make (adapters: ${WAITIO_ADAPTER_NAMES})")
  endif()
endforeach()

file(RELATIVE_PATH WAITIO_BIN_TO_PREFIX ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_PREFIX})
if(NOT WAITIO_BIN_TO_PREFIX)
  set(WAITIO_BIN_TO_PREFIX .)
endif()
configure_file(${PROJECT_SOURCE_DIR}/tools/waitio-compat-names.in
  ${PROJECT_BINARY_DIR}/tools/waitio-compat-names @ONLY
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(PROGRAMS ${PROJECT_BINARY_DIR}/tools/waitio-compat-names DESTINATION ${CMAKE_INSTALL_BINDIR})

# The object the linker scripts name so that --as-needed keeps the adapter (see its comment). It
# goes into users' programs: compiled with the project's compiler but none of its flags (no
# sanitizers, whatever the build type).
set(_wcn_ref ${PROJECT_BINARY_DIR}/waitio_compat_adapter_ref.o)
add_custom_command(OUTPUT ${_wcn_ref}
  COMMAND ${CMAKE_C_COMPILER} -std=c11 -O2 -fPIC -Wall -Wextra ${WAITIO_WERROR_FLAGS} -c
          ${PROJECT_SOURCE_DIR}/src/mpi/compat_adapter_ref.c -o ${_wcn_ref}
  DEPENDS ${PROJECT_SOURCE_DIR}/src/mpi/compat_adapter_ref.c
  COMMENT "Building waitio_compat_adapter_ref.o (the original's -lwaitio_mpi_<platform> names)"
  VERBATIM)
add_custom_target(waitio_compat_adapter_ref ALL DEPENDS ${_wcn_ref})
install(FILES ${_wcn_ref} DESTINATION ${CMAKE_INSTALL_LIBDIR})

if(WAITIO_COMPAT_PLATFORMS)
  string(REPLACE ";" ", " shown "${WAITIO_COMPAT_PLATFORMS}")
  message(STATUS "WaitIO: the original's build names for ${shown} (default MPI adapter: ${WAITIO_COMPAT_DEFAULT_ADAPTER})")
  # at install time, in the prefix given then (cmake --install --prefix P), below DESTDIR
  install(CODE "
    set(_wcn_prefix \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    execute_process(COMMAND sh \"\${_wcn_prefix}/${CMAKE_INSTALL_BINDIR}/waitio-compat-names\"
                            --prefix \"\${_wcn_prefix}\" ${WAITIO_COMPAT_PLATFORMS}
                    RESULT_VARIABLE _wcn_rc)
    if(NOT _wcn_rc EQUAL 0)
      message(FATAL_ERROR \"waitio-compat-names failed (\${_wcn_rc})\")
    endif()")
endif()
