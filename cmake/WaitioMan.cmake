# WaitioMan.cmake — the man pages, each made at build time from one source by tools/gen-man.py
# (plain Python 3, which the build already uses for the adapters' generated wrappers):
#   man/<tool>.<section>.md  ->  man<section>/<tool>.<section>   (the tools' pages, Markdown-lite)
#   include/waitio.h, waitio_rma.h, waitio_mpi.h
#                            ->  man3/waitio.3, waitio_rma.3, waitio_mpi.3, from the headers' own
#                                comments, and for each function a page man3/<function>.3 that
#                                sources its header's page
# installed under CMAKE_INSTALL_MANDIR (share/man). WAITIO_MAN=OFF leaves them out.
option(WAITIO_MAN "Build and install the man pages" ON)
if(NOT WAITIO_MAN)
  return()
endif()
find_package(Python3 QUIET COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "WaitIO: no Python 3, so no man pages (tools/gen-man.py makes them)")
  return()
endif()
set(_man_gen ${PROJECT_SOURCE_DIR}/tools/gen-man.py)
set(_man_dir ${PROJECT_BINARY_DIR}/man)
set(_man_outputs)

file(GLOB _man_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/man/*.md)
foreach(src ${_man_sources})
  get_filename_component(page ${src} NAME)
  string(REGEX REPLACE "\\.md$" "" page "${page}")
  if(NOT page MATCHES "\\.([1-9])$")
    message(FATAL_ERROR "WaitIO: man/${page}.md: the name must be PAGE.SECTION.md")
  endif()
  set(out ${_man_dir}/man${CMAKE_MATCH_1}/${page})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}/man${CMAKE_MATCH_1}
    COMMAND ${Python3_EXECUTABLE} ${_man_gen} md ${src} ${out} ${PROJECT_VERSION}
    DEPENDS ${src} ${_man_gen}
    COMMENT "Man page ${page}" VERBATIM)
  list(APPEND _man_outputs ${out})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${CMAKE_MATCH_1})
endforeach()

# The C API: a page per header (waitio.3, waitio_rma.3, waitio_mpi.3) and, for each function it
# declares, a page that sources it (`man waitio_isend`, `man waitio_put`, `man WAITIO_MPI_Isend`);
# the lists are re-read whenever a header changes (configure dependencies).
set(_api_links)
foreach(hdr waitio waitio_rma waitio_mpi)
  set(_api_header ${PROJECT_SOURCE_DIR}/include/${hdr}.h)
  set(out ${_man_dir}/man3/${hdr}.3)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}/man3
    COMMAND ${Python3_EXECUTABLE} ${_man_gen} header ${_api_header} ${out} ${PROJECT_VERSION}
    DEPENDS ${_api_header} ${_man_gen}
    COMMENT "Man page ${hdr}.3 (from include/${hdr}.h)" VERBATIM)
  list(APPEND _man_outputs ${out})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_api_header} ${_man_gen})
  execute_process(COMMAND ${Python3_EXECUTABLE} ${_man_gen} names ${_api_header}
                  OUTPUT_VARIABLE _api_functions RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "WaitIO: tools/gen-man.py cannot read the functions of include/${hdr}.h")
  endif()
  string(REPLACE "\n" ";" _api_functions "${_api_functions}")
  foreach(fn ${_api_functions})   # waitio_* and WAITIO_MPI_* (truef, the original filter, is not worth a page)
    if(NOT fn MATCHES "^(waitio_|WAITIO_)")
      continue()
    endif()
    file(CONFIGURE OUTPUT ${_man_dir}/man3/${fn}.3 CONTENT ".so man3/${hdr}.3\n")
    list(APPEND _api_links ${_man_dir}/man3/${fn}.3)
  endforeach()
endforeach()
install(FILES ${_api_links} DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
add_custom_target(man ALL DEPENDS ${_man_outputs})
