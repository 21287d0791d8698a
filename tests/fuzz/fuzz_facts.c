/* fuzz_facts.c: libFuzzer target for the facts and edge-list reader. The first byte
 * chooses the format and column types; the rest is the file (plain or gzip), served
 * through a memfd so the real reading path (stat, zlib, line splitting) runs. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static int fd = -1;
    static FILE *sink;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("rfx-fuzz", 0);
        sink = fopen("/dev/null", "w");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (size < 1 || fd < 0)
        return 0;
    unsigned char mode = data[0];
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
        return 0;
    int arity = mode & 3;                       /* 0..3 columns */
    static const rfx_prim kinds[] = {RFX_NUMBER, RFX_UNSIGNED, RFX_FLOAT, RFX_SYMBOL};
    rfx_prim types[3];
    for (int i = 0; i < 3; i++)
        types[i] = kinds[(mode >> (2 + i * 2)) & 3];
    rfx_read_opts ro = {.delimiter = (mode & 0x80) ? "," : (mode & 0x20) ? "::" : "\t", .edge_list = (mode & 0x40) != 0,
                        .threads = 2, .headers = (mode & 0x10) != 0, .rfc4180 = (mode & 0x08) != 0};
    rfx_symtab *syms = rfx_symtab_new();
    rfx_rows rows;
    rfx_rows_init(&rows, arity);
    rfx_read_facts(path, types, syms, &ro, &rows, sink);
    rfx_rows_free(&rows);
    rfx_symtab_free(syms);
    return 0;
}
