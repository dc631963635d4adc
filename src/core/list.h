/* list.h — intrusive doubly linked list used for queues (send queues, matching queues). */
#ifndef WIO_LIST_H
#define WIO_LIST_H

#include <stddef.h>

typedef struct wio_list {
    struct wio_list *next, *prev;
} wio_list;

#define WIO_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void wio_list_init(wio_list *l) { l->next = l->prev = l; }
static inline int wio_list_empty(const wio_list *l) { return l->next == l; }
static inline int wio_list_linked(const wio_list *n) { return n->next != NULL && n->next != n; }

static inline void wio_list_insert_tail(wio_list *head, wio_list *n)
{
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

static inline void wio_list_insert_head(wio_list *head, wio_list *n)
{
    n->next = head->next;
    n->prev = head;
    head->next->prev = n;
    head->next = n;
}

/* Unlinks n and leaves it self-linked, so wio_list_linked() is false afterwards. */
static inline void wio_list_remove(wio_list *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}

/* Moves every element of src to the tail of dst. */
static inline void wio_list_splice_tail(wio_list *dst, wio_list *src)
{
    if (wio_list_empty(src))
        return;
    src->next->prev = dst->prev;
    dst->prev->next = src->next;
    src->prev->next = dst;
    dst->prev = src->prev;
    wio_list_init(src);
}

#define WIO_LIST_FOREACH_SAFE(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

#endif
