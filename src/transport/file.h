/*
 * file.h — the file transport's row: frames through segment files in a directory that the PBs
 * share (file.c), for systems whose nodes share storage but no network path.
 */
#ifndef WIO_FILE_H
#define WIO_FILE_H

#include "transport/transport.h"

extern const wio_transport_ops wio_transport_file;

#endif
