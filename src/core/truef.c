/*
 * truef.c — the original library's everyone-filter, alone in its object file: a program that
 * uses it in a waitio_filter_func_t array without defining it finds it here, and a program that
 * defines its own truef still links (a static link never pulls this object in, and the shared
 * library's copy is interposed by the program's). Nothing in the library calls it.
 */
#include "waitio.h"

int truef(int pbid, int rank)
{
    (void)pbid;
    (void)rank;
    return 1;
}
