# fortran_module.cmake — the Fortran module `waitio` (src/mpi/waitio_module.f90), built once per
# Fortran compiler found, since .mod files are compiler-specific: gfortran and the MPI wrappers
# mpifort.openmpi / mpifort.mpich (which wrap gfortran here: one module, GNU-<major>), plus the
# compilers listed in -DWAITIO_FORTRAN_COMPILERS="a;b". Installed as
#   <includedir>/waitio/fortran/<ID>-<major>/waitio.mod     (e.g. include/waitio/fortran/GNU-12)
# The module's buffer routines take CFI descriptors (src/mpi/fortran_cdesc.c), whose layout is the
# compiler's: fortran_cdesc.c is compiled with gfortran's ISO_Fortran_binding.h, so modules are
# built for GNU Fortran only; other compilers are reported and skipped.
# Included from src/CMakeLists.txt after the library targets exist. Defines
# waitio_fortran_module_dir(<compiler> <var>): the module directory for that compiler, or "".
include(CheckIncludeFile)
set(WAITIO_FORTRAN_COMPILERS "" CACHE STRING "More Fortran compilers to build the waitio module for")
find_program(WAITIO_GFORTRAN gfortran)
set(_fc_candidates ${WAITIO_GFORTRAN} ${WAITIO_FORTRAN_COMPILERS})
find_program(_mpifort_openmpi mpifort.openmpi)
find_program(_mpifort_mpich mpifort.mpich)
list(APPEND _fc_candidates ${_mpifort_openmpi} ${_mpifort_mpich})
list(REMOVE_ITEM _fc_candidates "" "_mpifort_openmpi-NOTFOUND" "_mpifort_mpich-NOTFOUND" "WAITIO_GFORTRAN-NOTFOUND")

# The library side: ISO_Fortran_binding.h from the C compiler, else gfortran's (behind the C
# compiler's own headers).
check_include_file(ISO_Fortran_binding.h WAITIO_C_HAS_CFI)
set(WAITIO_CFI OFF CACHE INTERNAL "")
if(WAITIO_C_HAS_CFI)
  set(WAITIO_CFI ON CACHE INTERNAL "")
elseif(WAITIO_GFORTRAN)
  execute_process(COMMAND ${WAITIO_GFORTRAN} -print-file-name=include OUTPUT_VARIABLE _gf_inc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(EXISTS "${_gf_inc}/ISO_Fortran_binding.h")
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/mpi/fortran_cdesc.c PROPERTIES
      COMPILE_OPTIONS "-idirafter;${_gf_inc}")
    set(WAITIO_CFI ON CACHE INTERNAL "")
  endif()
endif()

# <ID>-<major> of a Fortran compiler (GNU only for now), "" if unusable.
function(waitio_fortran_key fc out)
  execute_process(COMMAND ${fc} --version OUTPUT_VARIABLE v ERROR_QUIET)
  execute_process(COMMAND ${fc} -dumpversion OUTPUT_VARIABLE ver OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  string(REGEX MATCH "^[0-9]+" major "${ver}")
  if(v MATCHES "GNU Fortran" AND major)
    set(${out} "GNU-${major}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

function(waitio_fortran_module_dir fc out)
  set(${out} "" PARENT_SCOPE)
  if(NOT WAITIO_CFI OR NOT fc)
    return()
  endif()
  waitio_fortran_key(${fc} key)
  if(key)
    set(${out} ${PROJECT_BINARY_DIR}/fortran/${key} PARENT_SCOPE)
  endif()
endfunction()

set(_mods)
set(_keys)
if(NOT WAITIO_CFI)
  message(STATUS "WaitIO: no ISO_Fortran_binding.h (gfortran's): the Fortran module is not built")
else()
  foreach(fc ${_fc_candidates})
    waitio_fortran_key(${fc} key)
    if(NOT key)
      message(STATUS "WaitIO: ${fc} is not GNU Fortran: no waitio module for it (its CFI descriptors differ)")
      continue()
    endif()
    if(key IN_LIST _keys)
      continue()
    endif()
    list(APPEND _keys ${key})
    set(dir ${PROJECT_BINARY_DIR}/fortran/${key})
    file(MAKE_DIRECTORY ${dir})
    set(src ${CMAKE_CURRENT_SOURCE_DIR}/mpi/waitio_module.f90)
    add_custom_command(OUTPUT ${dir}/waitio.mod
      COMMAND ${fc} -c -I${PROJECT_SOURCE_DIR}/include -J${dir} ${src} -o ${dir}/waitio_module.o
      DEPENDS ${src} ${PROJECT_SOURCE_DIR}/include/waitio_mpif.h
      COMMENT "Building the Fortran module waitio for ${key} with ${fc}")
    list(APPEND _mods ${dir}/waitio.mod)
    install(FILES ${dir}/waitio.mod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/waitio/fortran/${key})
    message(STATUS "WaitIO: Fortran module waitio for ${key} (${fc})")
  endforeach()
endif()
add_custom_target(fortran_module ALL DEPENDS ${_mods})
# for the pkg-config variable fmoddir and the CMake target waitio::fortran (cmake/WaitioFortranExport.cmake)
set(WAITIO_FORTRAN_MODULE_KEYS "${_keys}")
