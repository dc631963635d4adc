/* mpif_consistency.c — unit test: every constant of waitio_mpif.h (Fortran) equals the one of
 * waitio_mpi.h (C), except the status indices, which are 1-based in Fortran; and every line of
 * the Fortran include fits fixed form (statements in columns 7-72, comments in column 1). */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "waitio_mpi.h"

#ifndef MPIF_PATH
#error "MPIF_PATH must name include/waitio_mpif.h"
#endif

static const struct { const char *name; int value; } expected[] = {
#define E(n) {#n, n}
    E(WAITIO_STATUS_SIZE), E(WAITIO_REQUEST_SIZE), E(WAITIO_MPI_SUCCESS), E(WAITIO_MPI_ANY_SOURCE),
    E(WAITIO_MPI_ANY_TAG), E(WAITIO_MPI_UNDEFINED), E(WAITIO_MPI_CHAR), E(WAITIO_MPI_BYTE),
    E(WAITIO_MPI_INT), E(WAITIO_MPI_LONG), E(WAITIO_MPI_FLOAT), E(WAITIO_MPI_DOUBLE),
    E(WAITIO_MPI_INTEGER), E(WAITIO_MPI_REAL), E(WAITIO_MPI_DOUBLE_PRECISION),
    E(WAITIO_MPI_LOGICAL), E(WAITIO_MPI_CHARACTER), E(WAITIO_MPI_COMPLEX),
    E(WAITIO_MPI_DOUBLE_COMPLEX), E(WAITIO_MPI_INTEGER8), E(WAITIO_MPI_REAL8),
    E(WAITIO_MPI_SUM), E(WAITIO_MPI_PROD), E(WAITIO_MPI_MAX), E(WAITIO_MPI_MIN),
    E(WAITIO_MPI_LAND), E(WAITIO_MPI_LOR), E(WAITIO_MPI_LXOR), E(WAITIO_MPI_BAND),
    E(WAITIO_MPI_BOR), E(WAITIO_MPI_BXOR),
    {"WAITIO_MPI_SOURCE", WAITIO_MPI_SOURCE + 1}, {"WAITIO_MPI_TAG", WAITIO_MPI_TAG + 1},
    {"WAITIO_MPI_ERROR", WAITIO_MPI_ERROR + 1}, {"WAITIO_MPI_COUNT", WAITIO_MPI_COUNT + 1},
#undef E
};

int main(void)
{
    FILE *f = fopen(MPIF_PATH, "r");
    CHECK(f != NULL);
    if (!f)
        return check_report("mpif_consistency");
    char line[256], name[128];
    int value, found[sizeof expected / sizeof expected[0]] = {0}, params = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\n");
        CHECK(len <= 72);
        CHECK(line[0] == '!' || strncmp(line, "      ", 6) == 0);
        CHECK(strchr(line, '\t') == NULL);
        if (sscanf(line, " PARAMETER (%127[A-Z0-9_]=%d)", name, &value) != 2)
            continue;
        params++;
        for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
            if (!strcmp(name, expected[i].name)) {
                found[i] = 1;
                if (value != expected[i].value)
                    fprintf(stderr, "%s: Fortran %d, C %d\n", name, value, expected[i].value);
                CHECK(value == expected[i].value);
            }
    }
    fclose(f);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!found[i])
            fprintf(stderr, "missing in waitio_mpif.h: %s\n", expected[i].name);
        CHECK(found[i]);
    }
    CHECK(params >= 50);
    return check_report("mpif_consistency");
}
