#include "core/nn/kernels/Isa.h"

#include "core/common/Error.h"
#include "core/nn/kernels/KernelTable.h"

#include <atomic>
#include <cstdlib>

namespace sgdscope {

namespace {

std::atomic<int> forcedIsa {-1};
std::atomic<const kernels::KernelTable*> tableForTesting {nullptr};

/// The path SGDSCOPE_ISA names, or the fastest; `problem` gets what is wrong with the setting.
Isa fromEnvironment(std::string* problem)
{
    const char* value = std::getenv("SGDSCOPE_ISA");
    if (!value || !*value)
        return fastestIsa();
    const std::string name(value);
    for (const Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
        if (name != isaName(isa))
            continue;
        if (!isaSupported(isa))
            *problem = "SGDSCOPE_ISA=" + name + ": this CPU lacks " + (isa == Isa::Avx2 ? "AVX2 and FMA" : "AVX-512F")
                + " (the paths it can run: scalar" + (isaSupported(Isa::Avx2) ? ", avx2" : "") + ")";
        return isa;
    }
    *problem = "SGDSCOPE_ISA='" + name + "' is not a kernel path: use scalar, avx2 or avx512 (or leave it unset "
        + "for the fastest this CPU has, " + isaName(fastestIsa()) + ")";
    return fastestIsa();
}

Isa environmentIsa()
{
    static const Isa isa = [] {
        std::string problem;
        const Isa chosen = fromEnvironment(&problem);
        if (!problem.empty())
            throw SgdError(problem);
        return chosen;
    }();
    return isa;
}

} // namespace

std::string isaName(Isa isa)
{
    switch (isa) {
    case Isa::Scalar:
        return "scalar";
    case Isa::Avx2:
        return "avx2";
    case Isa::Avx512:
        return "avx512";
    }
    return "scalar";
}

bool isaSupported(Isa isa)
{
    // GCC's checks include the operating system's support for the registers' state (XGETBV).
    switch (isa) {
    case Isa::Scalar:
        return true;
    case Isa::Avx2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
        return __builtin_cpu_supports("avx512f") && isaSupported(Isa::Avx2);
    }
    return false;
}

Isa fastestIsa()
{
    if (isaSupported(Isa::Avx512))
        return Isa::Avx512;
    if (isaSupported(Isa::Avx2))
        return Isa::Avx2;
    return Isa::Scalar;
}

Isa activeIsa()
{
    const int forced = forcedIsa.load(std::memory_order_acquire);
    return forced >= 0 ? static_cast<Isa>(forced) : environmentIsa();
}

void setActiveIsa(Isa isa)
{
    if (!isaSupported(isa))
        throw SgdError("the " + isaName(isa) + " kernel path needs instructions this CPU lacks");
    forcedIsa.store(static_cast<int>(isa), std::memory_order_release);
}

void resetActiveIsa()
{
    forcedIsa.store(-1, std::memory_order_release);
}

std::string isaSettingProblem()
{
    std::string problem;
    fromEnvironment(&problem);
    return problem;
}

std::string kernelDescription()
{
    return "kernel order " + std::to_string(kernelOrderVersion) + ", " + isaName(activeIsa()) + " path";
}

namespace kernels {

void useKernelTableForTesting(const KernelTable* table)
{
    tableForTesting.store(table, std::memory_order_release);
}

const KernelTable& activeKernels()
{
    if (const KernelTable* forced = tableForTesting.load(std::memory_order_acquire))
        return *forced;
    switch (activeIsa()) {
    case Isa::Avx512:
        return avx512Kernels;
    case Isa::Avx2:
        return avx2Kernels;
    case Isa::Scalar:
        break;
    }
    return __builtin_cpu_supports("fma") ? scalarFmaKernels : scalarKernels;
}

} // namespace kernels

} // namespace sgdscope
