// gpu_lftj.cu: the leapfrog triejoin on the GPU (declared in lftj.h), compiled on its own
// over the primitives' CUDA core (primitives/gpu_core.cuh): TrieArrays, the breadth-first
// join, the join box by box and on several devices, the out-of-core triangle count and the join by
// induced parts with its subgraphs made on the device.
#include "gpu_core.cuh"
extern "C" {
#include "lftj.h"
}

#include "gpu_triearray.cuh"
#include "gpu_lftj_level.cuh"
#include "gpu_lftj_pair.cuh"
#include "gpu_lftj_small.cuh"
#include "gpu_lftj.cuh"
#include "gpu_boxed.cuh"
#include "gpu_pairs.cuh"
#include "gpu_induced.cuh"
