/* Host execution of gpu/cuda_backend.cu: the very file, compiled by the host
 * C++ compiler against gpu/host/cuda_runtime.h. */
#include "../cuda_backend.cu"
