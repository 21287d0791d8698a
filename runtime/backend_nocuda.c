/* backend_nocuda.c: stands in for the CUDA backend in builds without the CUDA toolkit. */
#include "backend.h"

bool rfx_cuda_available(char *name, size_t cap)
{
    (void)name;
    (void)cap;
    return false;
}

bool rfx_cuda_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    return false;
}

rfx_backend *rfx_backend_cuda(const rfx_run_opts *o, char *why, size_t whycap)
{
    (void)o;
    snprintf(why, whycap, "this rfx was built without the CUDA toolkit");
    return NULL;
}

rfx_device_keep *rfx_device_keep_new(void)
{
    return NULL;
}

void rfx_device_keep_clear(rfx_device_keep *k)
{
    (void)k;
}

void rfx_device_keep_free(rfx_device_keep *k)
{
    (void)k;
}

bool rfx_device_keep_warm(const rfx_device_keep *k)
{
    (void)k;
    return false;
}

void rfx_device_keep_forget_inputs(rfx_device_keep *k)
{
    (void)k;
}

bool rfx_backend_cuda_compiling(void)
{
    return false;
}

void rfx_backend_cuda_settle(void)
{
}

void rfx_backend_cuda_warm(const int *devices, int ndevices)
{
    (void)devices;
    (void)ndevices;
}

int rfx_backend_cuda_warm_state(double *t0)
{
    *t0 = 0;
    return RFX_WARM_NONE;
}
