/* fuzz_facts.c: libFuzzer target for the facts and edge-list reader. The first byte
 * chooses the format and column types (with no columns, a second byte chooses a 64-bit,
 * decimal or date column and a number after it); the rest is the file (plain or gzip),
 * served through a memfd so the real reading path (stat, zlib, line splitting) runs. */
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
    int arity = mode & 3;                       /* 0..3 columns */
    static const rfx_prim kinds[] = {RFX_NUMBER, RFX_UNSIGNED, RFX_FLOAT, RFX_SYMBOL};
    static const rfx_prim wide[] = {RFX_NUMBER64, RFX_UNSIGNED64, RFX_FLOAT64, RFX_DECIMAL, RFX_DATE};
    rfx_prim types[3];
    for (int i = 0; i < 3; i++)
        types[i] = kinds[(mode >> (2 + i * 2)) & 3];
    rfx_decimal_cols dec;
    memset(&dec, 0, sizeof dec);
    size_t skip = 1;
    if (arity == 0 && size >= 2) {   /* a 64-bit, decimal or date column, then a number */
        rfx_prim k = wide[data[1] % 5];
        dec.precision[0] = 15;
        dec.scale[0] = (uint8_t)((data[1] >> 4) % 16);
        arity = k == RFX_DATE ? 2 : 3;
        types[0] = k;
        types[1] = k == RFX_DATE ? RFX_NUMBER : RFX_WORD;
        types[2] = RFX_NUMBER;
        skip = 2;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data + skip, size - skip, 0) != (ssize_t)(size - skip))
        return 0;
    rfx_read_opts ro = {.delimiter = (mode & 0x80) ? "," : (mode & 0x20) ? "::" : "\t", .edge_list = (mode & 0x40) != 0,
                        .threads = 2, .headers = (mode & 0x10) != 0, .rfc4180 = (mode & 0x08) != 0,
                        .decimals = skip == 2 ? &dec : NULL};
    rfx_symtab *syms = rfx_symtab_new();
    rfx_rows rows;
    rfx_rows_init(&rows, arity);
    rfx_read_facts(path, types, syms, &ro, &rows, sink);
    rfx_rows_free(&rows);
    rfx_symtab_free(syms);
    return 0;
}
