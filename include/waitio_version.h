/*
 * waitio_version.h — WaitIO's version: the one place it is written. CMake's project() takes it
 * from here (the top-level CMakeLists.txt reads these lines), and so do setup.py, the .pc files
 * and the CMake package; a configure fails when WAITIO_VERSION_STRING disagrees with the parts.
 * Installed beside waitio.h. waitio_version() gives the version of the library in use.
 */
#ifndef WAITIO_VERSION_H
#define WAITIO_VERSION_H

#define WAITIO_VERSION_MAJOR 0
#define WAITIO_VERSION_MINOR 1
#define WAITIO_VERSION_PATCH 0
#define WAITIO_VERSION_STRING "0.1.0"
/* one comparable number: MAJOR * 10000 + MINOR * 100 + PATCH */
#define WAITIO_VERSION_NUMBER (WAITIO_VERSION_MAJOR * 10000 + WAITIO_VERSION_MINOR * 100 + WAITIO_VERSION_PATCH)

#endif
