// thrust_shim.cu: CUB behind the plain C interface of thrust_shim.h.
#include "thrust_shim.h"

#include <cub/cub.cuh>

extern "C" int rfx_shim_sort_u64(void *scratch, size_t *bytes, uint64_t *keys, uint64_t *alt, size_t n,
                                 int begin_bit, int end_bit, int *result, rfx_stream s)
{
    cub::DoubleBuffer<uint64_t> d(keys, alt);
    cudaError_t e = cub::DeviceRadixSort::SortKeys(scratch, *bytes, d, (int64_t)n, begin_bit, end_bit, (cudaStream_t)s);
    if (result)
        *result = d.selector;
    return (int)e;
}

extern "C" int rfx_shim_sort_u64_from(void *scratch, size_t *bytes, const uint64_t *in, uint64_t *out, size_t n,
                                      int begin_bit, int end_bit, rfx_stream s)
{
    return (int)cub::DeviceRadixSort::SortKeys(scratch, *bytes, in, out, (int64_t)n, begin_bit, end_bit,
                                               (cudaStream_t)s);
}

extern "C" int rfx_shim_sort_u32(void *scratch, size_t *bytes, uint32_t *keys, uint32_t *alt, size_t n,
                                 int begin_bit, int end_bit, int *result, rfx_stream s)
{
    cub::DoubleBuffer<uint32_t> d(keys, alt);
    cudaError_t e = cub::DeviceRadixSort::SortKeys(scratch, *bytes, d, (int64_t)n, begin_bit, end_bit, (cudaStream_t)s);
    if (result)
        *result = d.selector;
    return (int)e;
}

extern "C" int rfx_shim_sort_pairs_u32(void *scratch, size_t *bytes, uint32_t *keys, uint32_t *keys_alt,
                                       uint32_t *vals, uint32_t *vals_alt, size_t n, int end_bit, int *result,
                                       rfx_stream s)
{
    cub::DoubleBuffer<uint32_t> k(keys, keys_alt), v(vals, vals_alt);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(scratch, *bytes, k, v, (int64_t)n, 0, end_bit, (cudaStream_t)s);
    if (result)
        *result = k.selector | (v.selector << 1);
    return (int)e;
}

extern "C" int rfx_shim_exclusive_sum_u64(void *scratch, size_t *bytes, const uint64_t *in, uint64_t *out,
                                          size_t n, rfx_stream s)
{
    return (int)cub::DeviceScan::ExclusiveSum(scratch, *bytes, in, out, (int64_t)n, (cudaStream_t)s);
}
