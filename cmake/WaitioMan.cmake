# WaitioMan.cmake — the man pages, each made at build time from one source by tools/gen-man.py
# (plain Python 3, which the build already uses for the adapters' generated wrappers):
#   man/<tool>.<section>.md  ->  man<section>/<tool>.<section>   (the tools' pages, Markdown-lite)
#   include/waitio.h         ->  man3/waitio.3, from the header's own comments, and for each
#                                function it declares a page man3/<function>.3 that sources it
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

set(_api_header ${PROJECT_SOURCE_DIR}/include/waitio.h)
set(out ${_man_dir}/man3/waitio.3)
add_custom_command(OUTPUT ${out}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}/man3
  COMMAND ${Python3_EXECUTABLE} ${_man_gen} header ${_api_header} ${out} ${PROJECT_VERSION}
  DEPENDS ${_api_header} ${_man_gen}
  COMMENT "Man page waitio.3 (from include/waitio.h)" VERBATIM)
list(APPEND _man_outputs ${out})
install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)

# one page per function, each sourcing waitio.3 (`man waitio_isend`); the list is re-read
# whenever waitio.h changes (it is a configure dependency)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_api_header} ${_man_gen})
execute_process(COMMAND ${Python3_EXECUTABLE} ${_man_gen} names ${_api_header}
                OUTPUT_VARIABLE _api_functions RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "WaitIO: tools/gen-man.py cannot read the functions of include/waitio.h")
endif()
string(REPLACE "\n" ";" _api_functions "${_api_functions}")
set(_api_links)
foreach(fn ${_api_functions})   # waitio_* (truef, the original filter, is not worth a page)
  if(NOT fn MATCHES "^waitio_")
    continue()
  endif()
  file(CONFIGURE OUTPUT ${_man_dir}/man3/${fn}.3 CONTENT ".so man3/waitio.3\n")
  list(APPEND _api_links ${_man_dir}/man3/${fn}.3)
endforeach()
install(FILES ${_api_links} DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
add_custom_target(man ALL DEPENDS ${_man_outputs})
