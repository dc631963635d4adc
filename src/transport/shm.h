/*
 * shm.h — the shm transport's row: shared-memory rings between processes of one host, with
 * single copy for large messages (shm.c).
 */
#ifndef WIO_SHM_H
#define WIO_SHM_H

#include "transport/transport.h"

extern const wio_transport_ops wio_transport_shm;

#endif
