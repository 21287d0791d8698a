/* fuzz_program.c: libFuzzer target for the front end and the planner: any byte string
 * must give diagnostics or a verified plan, never a crash, hang, sanitizer report or
 * internal planning error. */
#include "ra_ir.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    int nerr;
    rfx_program *p = rfx_frontend_parse((const char *)data, size, "fuzz.dl", sink, &nerr);
    if (!p)
        return 0;
    rfx_frontend_print(sink, p);
    /* a checked program must always lower: an internal error is a finding. Inputs of odd
     * length are planned as the rfx command plans them (only results seen: relations no
     * output needs left out, unread input columns) */
    rfx_plan_opts opts = {.results_only = true};
    rfx_plan *plan = rfx_plan_build(p, size % 2 ? &opts : NULL, NULL);
    if (!plan)
        abort();
    rfx_plan_print(sink, plan);
    rfx_plan_free(plan);
    rfx_program_free(p);
    return 0;
}
