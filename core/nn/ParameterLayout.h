#pragma once

#include "core/nn/NetworkSpec.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace sgdscope {

/// Where each tensor lives in the flat parameter vector. Tensors are named and shaped as the state_dict of
/// PyTorch's nn.Sequential of the network's layers, one module each (NetworkSpec::moduleIndex): a dense layer's
/// "I.weight" [out, in] (row-major) and "I.bias" [out], a convolution's "I.weight" [out, channels, kh, kw] and
/// "I.bias" [out]; an MLP's are "0.weight", "0.bias", "2.weight", ... (the index counts the activation modules
/// too), LeNet-5's "1.weight" (after the input's nn.Unflatten) to "12.bias". Each tensor starts on a 64-byte
/// boundary so that every worker's gradient buffer has the same alignment (part of what makes results bitwise
/// reproducible across worker counts).
class ParameterLayout
{
public:
    struct Tensor
    {
        std::string name;
        std::vector<std::int64_t> shape;
        std::size_t offset = 0; // in floats, into the padded vector
        std::size_t size = 0; // elements
    };

    ParameterLayout() = default;
    explicit ParameterLayout(const NetworkSpec& spec);

    const std::vector<Tensor>& tensors() const { return m_tensors; }
    /// The tensors of the network's weighted layer number `layer` (0 for its first dense or convolution layer).
    const Tensor& weight(int layer) const { return m_tensors[static_cast<std::size_t>(2 * layer)]; }
    const Tensor& bias(int layer) const { return m_tensors[static_cast<std::size_t>(2 * layer + 1)]; }
    /// Floats to allocate (including alignment padding, which stays zero).
    std::size_t paddedSize() const { return m_paddedSize; }
    /// Number of trainable parameters.
    std::size_t parameterCount() const { return m_count; }

private:
    std::vector<Tensor> m_tensors;
    std::size_t m_paddedSize = 0;
    std::size_t m_count = 0;
};

/// Storage on 64-byte boundaries (a cache line, an AVX-512 vector), whatever instruction set the build targets
/// (Eigen's allocator aligns to what the build's flags allow: 16 bytes without -march).
template<typename T>
struct CacheLineAllocator
{
    using value_type = T;
    static constexpr std::align_val_t alignment {64};
    CacheLineAllocator() = default;
    template<typename U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept
    {
    }
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, alignment); }
    template<typename U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept
    {
        return true;
    }
};

template<typename Scalar>
using AlignedVector = std::vector<Scalar, CacheLineAllocator<Scalar>>;
using ParamVector = AlignedVector<float>;

/// The parameters as contiguous bytes in layout order without padding (little-endian F32): what
/// safetensors stores and what params_digest hashes.
std::vector<float> packedParameters(const ParameterLayout& layout, const float* params);

} // namespace sgdscope
