/*
 * ucx_sym.h — UCX's functions as the ucx transport calls them: through one table of pointers
 * (wio_ucx_sym) that ucx_sym.c fills from libucp.so.0 (or WAITIO_UCX_LIBRARY), dlopen'ed the
 * first time the ucx transport is opened or waitio-info asks about UCX. libwaitio itself is not
 * linked against UCX, so a process that never selects the ucx transport never loads it (issue 29:
 * UCX's libraries cost about 2 ms of every process's start-up).
 *
 * Every ucx*.c includes this header (through ucx.h) instead of UCX's; after UCX's declarations,
 * each function's name is #defined to its entry in the table, so the call sites read as plain
 * UCX calls. Calling a UCX function that is not in WIO_UCX_FUNCS leaves an undefined symbol in
 * libwaitio.so, which the library's link (-Wl,--no-undefined) refuses, and
 * tests/scripts/ucx_dlopen.sh checks with nm: add such a function to BOTH lists below.
 */
#ifndef WIO_UCX_SYM_H
#define WIO_UCX_SYM_H

#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#include <ucm/api/ucm.h>

/* Every UCX function the ucx transport calls, in alphabetical order. libucp's handle also
 * resolves libuct's, libucs' and libucm's (its dependencies). ucp_init is an inline wrapper of
 * ucp_init_version (below). */
#define WIO_UCX_FUNCS(X)                                                                          \
    X(ucm_set_event_handler)                                                                      \
    X(ucm_unset_event_handler)                                                                    \
    X(ucp_am_data_release)                                                                        \
    X(ucp_am_recv_data_nbx)                                                                       \
    X(ucp_am_send_nbx)                                                                            \
    X(ucp_atomic_op_nbx)                                                                          \
    X(ucp_cleanup)                                                                                \
    X(ucp_config_modify)                                                                          \
    X(ucp_config_read)                                                                            \
    X(ucp_config_release)                                                                         \
    X(ucp_ep_close_nbx)                                                                           \
    X(ucp_ep_create)                                                                              \
    X(ucp_ep_flush_nbx)                                                                           \
    X(ucp_ep_print_info)                                                                          \
    X(ucp_ep_rkey_unpack)                                                                         \
    X(ucp_get_nbx)                                                                                \
    X(ucp_get_version)                                                                            \
    X(ucp_init_version)                                                                           \
    X(ucp_mem_map)                                                                                \
    X(ucp_mem_query)                                                                              \
    X(ucp_mem_unmap)                                                                              \
    X(ucp_put_nbx)                                                                                \
    X(ucp_request_cancel)                                                                         \
    X(ucp_request_check_status)                                                                   \
    X(ucp_request_free)                                                                           \
    X(ucp_rkey_buffer_release)                                                                    \
    X(ucp_rkey_destroy)                                                                           \
    X(ucp_rkey_pack)                                                                              \
    X(ucp_rkey_ptr)                                                                               \
    X(ucp_worker_arm)                                                                             \
    X(ucp_worker_create)                                                                          \
    X(ucp_worker_destroy)                                                                         \
    X(ucp_worker_fence)                                                                           \
    X(ucp_worker_get_address)                                                                     \
    X(ucp_worker_get_efd)                                                                         \
    X(ucp_worker_progress)                                                                        \
    X(ucp_worker_release_address)                                                                 \
    X(ucp_worker_set_am_recv_handler)                                                             \
    X(ucs_status_string)                                                                          \
    X(uct_component_query)                                                                        \
    X(uct_config_release)                                                                         \
    X(uct_md_close)                                                                               \
    X(uct_md_config_read)                                                                         \
    X(uct_md_open)                                                                                \
    X(uct_md_query_tl_resources)                                                                  \
    X(uct_query_components)                                                                       \
    X(uct_release_component_list)                                                                 \
    X(uct_release_tl_resource_list)

/* The table: each entry has the exact type of UCX's declaration (a changed prototype in a new
 * UCX fails to compile here rather than misbehaving at run time). */
typedef struct wio_ucx_syms {
#define WIO_UCX_MEMBER(name) __typeof__(name) *name;
    WIO_UCX_FUNCS(WIO_UCX_MEMBER)
#undef WIO_UCX_MEMBER
} wio_ucx_syms;

extern wio_ucx_syms wio_ucx_sym;

/* Loads UCX (once per process; later calls return the first outcome): 0, or WAITIO_ERR_ENV with
 * "UCX library NAME could not be loaded: WHY" set as the error text. Thread-safe. Never unloads:
 * UCX's memory hooks stay installed for the process's life. */
int wio_ucx_load(void);
/* NULL once UCX is loaded; else "UCX library NAME could not be loaded: WHY" (loads it first). */
const char *wio_ucx_load_error(void);

/* The names the call sites use. ucx_sym.c fills the table by name and sees none of these. */
#ifndef WIO_UCX_SYM_NO_RENAME
#define ucm_set_event_handler (wio_ucx_sym.ucm_set_event_handler)
#define ucm_unset_event_handler (wio_ucx_sym.ucm_unset_event_handler)
#define ucp_am_data_release (wio_ucx_sym.ucp_am_data_release)
#define ucp_am_recv_data_nbx (wio_ucx_sym.ucp_am_recv_data_nbx)
#define ucp_am_send_nbx (wio_ucx_sym.ucp_am_send_nbx)
#define ucp_atomic_op_nbx (wio_ucx_sym.ucp_atomic_op_nbx)
#define ucp_cleanup (wio_ucx_sym.ucp_cleanup)
#define ucp_config_modify (wio_ucx_sym.ucp_config_modify)
#define ucp_config_read (wio_ucx_sym.ucp_config_read)
#define ucp_config_release (wio_ucx_sym.ucp_config_release)
#define ucp_ep_close_nbx (wio_ucx_sym.ucp_ep_close_nbx)
#define ucp_ep_create (wio_ucx_sym.ucp_ep_create)
#define ucp_ep_flush_nbx (wio_ucx_sym.ucp_ep_flush_nbx)
#define ucp_ep_print_info (wio_ucx_sym.ucp_ep_print_info)
#define ucp_ep_rkey_unpack (wio_ucx_sym.ucp_ep_rkey_unpack)
#define ucp_get_nbx (wio_ucx_sym.ucp_get_nbx)
#define ucp_get_version (wio_ucx_sym.ucp_get_version)
#define ucp_init_version (wio_ucx_sym.ucp_init_version)
#define ucp_init(params, config, context_p)                                                       \
    ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, (params), (config), (context_p))
#define ucp_mem_map (wio_ucx_sym.ucp_mem_map)
#define ucp_mem_query (wio_ucx_sym.ucp_mem_query)
#define ucp_mem_unmap (wio_ucx_sym.ucp_mem_unmap)
#define ucp_put_nbx (wio_ucx_sym.ucp_put_nbx)
#define ucp_request_cancel (wio_ucx_sym.ucp_request_cancel)
#define ucp_request_check_status (wio_ucx_sym.ucp_request_check_status)
#define ucp_request_free (wio_ucx_sym.ucp_request_free)
#define ucp_rkey_buffer_release (wio_ucx_sym.ucp_rkey_buffer_release)
#define ucp_rkey_destroy (wio_ucx_sym.ucp_rkey_destroy)
#define ucp_rkey_pack (wio_ucx_sym.ucp_rkey_pack)
#define ucp_rkey_ptr (wio_ucx_sym.ucp_rkey_ptr)
#define ucp_worker_arm (wio_ucx_sym.ucp_worker_arm)
#define ucp_worker_create (wio_ucx_sym.ucp_worker_create)
#define ucp_worker_destroy (wio_ucx_sym.ucp_worker_destroy)
#define ucp_worker_fence (wio_ucx_sym.ucp_worker_fence)
#define ucp_worker_get_address (wio_ucx_sym.ucp_worker_get_address)
#define ucp_worker_get_efd (wio_ucx_sym.ucp_worker_get_efd)
#define ucp_worker_progress (wio_ucx_sym.ucp_worker_progress)
#define ucp_worker_release_address (wio_ucx_sym.ucp_worker_release_address)
#define ucp_worker_set_am_recv_handler (wio_ucx_sym.ucp_worker_set_am_recv_handler)
#define ucs_status_string (wio_ucx_sym.ucs_status_string)
#define uct_component_query (wio_ucx_sym.uct_component_query)
#define uct_config_release (wio_ucx_sym.uct_config_release)
#define uct_md_close (wio_ucx_sym.uct_md_close)
#define uct_md_config_read (wio_ucx_sym.uct_md_config_read)
#define uct_md_open (wio_ucx_sym.uct_md_open)
#define uct_md_query_tl_resources (wio_ucx_sym.uct_md_query_tl_resources)
#define uct_query_components (wio_ucx_sym.uct_query_components)
#define uct_release_component_list (wio_ucx_sym.uct_release_component_list)
#define uct_release_tl_resource_list (wio_ucx_sym.uct_release_tl_resource_list)
#endif

#endif
