# WaitioFortranExport.cmake — where the installed Fortran module `waitio` is, for users' builds:
#   pkg-config: the variable fmoddir of waitio.pc (the module of the first Fortran compiler
#     found, normally gfortran's), and waitio-fortran.pc whose --cflags is -I<fmoddir>:
#       mpifort app.f90 $(pkg-config --cflags --libs waitio-fortran)
#   CMake: the target waitio::fortran of the package (waitioConfig.cmake.in), which picks the
#     module of the consumer's own GNU Fortran major version when installed, else that default.
# Included from src/CMakeLists.txt after mpi/fortran_module.cmake (WAITIO_FORTRAN_MODULE_KEYS:
# the <ID>-<major> directories built) and before the .pc files and the package config are made.
set(WAITIO_FORTRAN_DEFAULT_KEY "")
set(WAITIO_PC_FMODDIR "")
if(WAITIO_FORTRAN_MODULE_KEYS)
  list(GET WAITIO_FORTRAN_MODULE_KEYS 0 WAITIO_FORTRAN_DEFAULT_KEY)
  set(WAITIO_PC_FMODDIR "\${includedir}/waitio/fortran/${WAITIO_FORTRAN_DEFAULT_KEY}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/waitio-fortran.pc.in ${PROJECT_BINARY_DIR}/waitio-fortran.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/waitio-fortran.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
