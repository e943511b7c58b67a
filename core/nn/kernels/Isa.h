#pragma once

#include <string>

namespace sgdscope {

/// The instruction-set paths of the training kernels (core/nn/kernels). Every path computes every value with
/// the same operations in the same order, so they give the same bits; they differ only in speed. Scalar is
/// the reference (plain C++, std::fma) and runs on any x86-64 CPU; avx2 needs AVX2 and FMA (Intel Haswell,
/// AMD Zen and later); avx512 needs AVX-512F.
enum class Isa
{
    Scalar,
    Avx2,
    Avx512
};

std::string isaName(Isa isa);
/// Whether this CPU (and its operating system) can run the path.
bool isaSupported(Isa isa);
/// The fastest path this CPU supports.
Isa fastestIsa();
/// The path in use: SGDSCOPE_ISA=scalar|avx2|avx512 when set, else fastestIsa(). Decided once, on first use;
/// throws SgdError (naming the variable, its value and what is allowed) when the variable names no path or
/// a path this CPU lacks.
Isa activeIsa();
/// Forces a path for the rest of the process (tests that compare paths); throws SgdError if this CPU lacks it.
/// Not while a trainer runs.
void setActiveIsa(Isa isa);
/// Back to SGDSCOPE_ISA's choice (or the fastest path) after setActiveIsa.
void resetActiveIsa();

namespace kernels {
struct KernelTable;
/// Tests only: every kernel call goes to `table` until called with nullptr (e.g. the scalar path built without
/// FMA instructions, on a CPU that has them). Not while a trainer runs.
void useKernelTableForTesting(const KernelTable* table);
} // namespace kernels
/// Checks SGDSCOPE_ISA without using it: the error activeIsa() would throw, or "" when the setting is usable.
std::string isaSettingProblem();

/// The version of the kernels' order of floating-point operations (what the bits depend on besides the
/// source of the model, the data and the settings). Processes that exchange parameters compare it; it changes
/// whenever a kernel's order of operations does.
inline constexpr int kernelOrderVersion = 1;
/// "kernels order 1, avx512 path": what --version and summary.json say.
std::string kernelDescription();

} // namespace sgdscope
