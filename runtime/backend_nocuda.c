/* backend_nocuda.c: stands in for the CUDA backend in builds without the CUDA toolkit. */
#include "backend.h"

bool rfx_cuda_available(char *name, size_t cap)
{
    (void)name;
    (void)cap;
    return false;
}

rfx_backend *rfx_backend_cuda(const rfx_run_opts *o, const char **why)
{
    (void)o;
    *why = "this rfx was built without the CUDA toolkit";
    return NULL;
}
