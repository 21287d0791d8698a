/* fuzz_json.c: libFuzzer target for the JSON facts reader (IO=jsonfile). The first byte
 * chooses one of a fixed program's relations (numbers, symbols, floats, unsigned, nested
 * and recursive records, 64-bit, decimal and date values, a nullary relation); the rest
 * is the file, served through a memfd so the real reading path (zlib included) runs. */
#include "runtime.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const char program[] = ".type L = [h: number, t: L]\n"
                              ".type P = [s: symbol, l: L, f: float]\n"
                              ".decl a(x: number, s: symbol, f: float, u: unsigned)\n"
                              ".decl b(p: P, l: L)\n"
                              ".decl c(w: number64, d: decimal(12, 3), t: date, v: unsigned64, g: float64)\n"
                              ".decl n()\n";

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static int fd = -1;
    static FILE *sink;
    static char path[64];
    static rfx_program *prog;
    if (fd < 0) {
        fd = memfd_create("rfx-fuzz-json", 0);
        sink = fopen("/dev/null", "w");
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int nerr;
        prog = rfx_frontend_parse(program, sizeof program - 1, "fuzz_json.dl", sink, &nerr);
    }
    if (size < 1 || fd < 0 || !prog)
        return 0;
    const rfx_relation *rel = &prog->rels[data[0] % prog->nrels];
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1))
        return 0;
    rfx_symtab *syms = rfx_symtab_new();
    rfx_fn_env *env = syms ? rfx_fn_env_new(syms) : NULL;
    int coltypes[RFX_MAX_ARITY + 1];
    for (int a = 0; a < rel->arity; a++)
        coltypes[a] = rel->attrs[a].type;
    rfx_record_io rio = {prog, coltypes, syms, env};
    rfx_json_io io = {prog, rel, syms, &rio, (data[0] & 0x80) != 0};
    rfx_rows rows;
    rfx_rows_init(&rows, rel->arity);
    if (env && rfx_read_json(path, &io, &rows, sink) == RFX_OK) {   /* what was read writes */
        rfx_prim prims[RFX_MAX_ARITY + 1];
        for (int a = 0; a < rel->arity; a++)
            prims[a] = prog->types[rel->attrs[a].type].prim;
        rfx_write_json("-", &io, &rows, prims, true, 1, sink, sink);
    }
    rfx_rows_free(&rows);
    rfx_fn_env_free(env);
    rfx_symtab_free(syms);
    return 0;
}
