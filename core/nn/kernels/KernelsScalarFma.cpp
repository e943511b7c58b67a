// The scalar reference path again, the same source built with -mfma: std::fma becomes one instruction instead
// of a library call (the same correctly rounded result, some twenty times faster). activeKernels() takes it for
// the scalar path where the CPU has FMA; tests/test_kernels.cpp checks that both builds agree bit for bit.
#define SGDSCOPE_KERNEL_NS scalarfma
#define SGDSCOPE_KERNEL_NAME "scalar"
#define SGDSCOPE_KERNEL_TABLE scalarFmaKernels
#include "core/nn/kernels/ScalarShape.h"

#include "core/nn/kernels/KernelsImpl.h"
