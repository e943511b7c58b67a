// The scalar reference path: plain C++ for any x86-64 CPU (built without instruction-set flags), exactly what
// the vector paths must reproduce. std::fma is a library call here, correctly rounded with or without FMA
// hardware. KernelsScalarFma.cpp builds the same source with FMA instructions, for CPUs that have them.
#define SGDSCOPE_KERNEL_NS scalar
#define SGDSCOPE_KERNEL_NAME "scalar"
#define SGDSCOPE_KERNEL_TABLE scalarKernels
#include "core/nn/kernels/ScalarShape.h"

#include "core/nn/kernels/KernelsImpl.h"
