// The training kernels' speed, as JSON (one object), on every instruction-set path this CPU has:
// - a large square product (1024^3) through the forward kernel and through the weight-gradient kernel (one
//   chunk): Gflop/s, the kernels' own peak on this machine;
// - the fashion-mnist model's training step on a pass of 256 samples (784-256-128-10 ReLU, softmax
//   cross-entropy; 2 x 503,552 flops a sample: forward, input gradients below the first layer, weight
//   gradients) on a pass of 256 samples of Fashion-MNIST (or generated data of its width), with chunks of 8
//   (the automatic rule at batch 256) and of 64: samples/s, Gflop/s and the share of the square product's.
// Each figure: the best of --reps timed windows of about --seconds (the best, not the median: on a shared
// machine, interference only ever slows a window down).
//   bench_kernels [--seconds S] [--reps N]
#include "core/common/Json.h"
#include "core/data/GeneratedData.h"
#include "core/data/IdxLoader.h"
#include "core/nn/Initialization.h"
#include "core/nn/NetworkWorkspace.h"
#include "core/nn/kernels/Isa.h"
#include "core/nn/kernels/KernelTable.h"
#include "core/train/DatasetView.h"
#include "core/train/ReductionPlan.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

using namespace sgdscope;
using Clock = std::chrono::steady_clock;

namespace {

double seconds = 1.0;
int reps = 3;

/// Calls `work` repeatedly for about `seconds` a window; the best window's seconds per call.
double bestSecondsPerCall(const std::function<void()>& work)
{
    work(); // warm-up
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        int calls = 0;
        const auto t0 = Clock::now();
        double elapsed = 0;
        while (elapsed < seconds) {
            work();
            ++calls;
            elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        }
        best = std::min(best, elapsed / calls);
    }
    return best;
}

double round2(double x)
{
    return std::round(x * 100.0) / 100.0;
}

Json squareProducts(const kernels::KernelTable& k)
{
    constexpr int n = 1024;
    std::vector<float> a(static_cast<std::size_t>(n) * (n + 16), 0.5f), w(static_cast<std::size_t>(n) * n, 0.25f),
        bias(n, 0.0f), z(static_cast<std::size_t>(n) * (n + 16), 0.0f), pack(k.packFloats(n, n) + 64, 0.0f);
    kernels::LinearForwardArgs f;
    f.m = n;
    f.n = n;
    f.k = n;
    f.a = a.data();
    f.lda = n + 16;
    f.w = w.data();
    f.bias = bias.data();
    f.z = z.data();
    f.ldz = n + 16;
    f.pack = pack.data();
    const double forward = bestSecondsPerCall([&] { k.linearForward(f); });

    // weight gradient: out 1024, in 1023 (+ the bias column), 1024 samples as one chunk
    const kernels::TreeStep step {.begin = 0, .end = n};
    const kernels::TreeProgram program {&step, 1, 0, 1, 1};
    std::vector<float> gw(static_cast<std::size_t>(n) * (n - 1), 0.0f), gb(n, 0.0f), tiles(k.slotFloats(1), 0.0f);
    float* weights[] = {gw.data()};
    float* biases[] = {gb.data()};
    kernels::WeightGradientArgs g;
    g.out = n;
    g.in = n - 1;
    g.samples = n;
    g.d = z.data();
    g.ldd = n + 16;
    g.a = a.data();
    g.lda = n + 16;
    g.program = &program;
    g.weights = weights;
    g.biases = biases;
    g.tiles = tiles.data();
    const double gradient = bestSecondsPerCall([&] { k.weightGradient(g); });
    const double flops = 2.0 * n * n * n;
    Json j = Json::object();
    j["forward_gflops"] = round2(flops / forward / 1e9);
    j["weight_gradient_gflops"] = round2(flops / gradient / 1e9);
    return j;
}

Json fashionStep(int chunk)
{
    const NetworkSpec spec = NetworkSpec::mlp({784, 256, 128, 10}, Activation::Relu, LossKind::SoftmaxCrossEntropy);
    const ParameterLayout layout(spec);
    const ParamVector params = initialParameters(spec, layout, WeightInit::He, 1);
    // Fashion-MNIST's images where Debian's package is installed (their zeros are as fast as any value), else
    // generated blobs of the same width.
    const bool fashion = std::filesystem::exists(std::string(debianFashionMnistFolder) + "/train-images-idx3-ubyte.gz");
    const Dataset data
        = fashion ? loadIdxFolder(debianFashionMnistFolder, "fashion-mnist").train : makeBlobs(4096, 784, 10, 1.0, 3);
    const SampleView<float> view = viewOf(data);
    constexpr int batch = 256;
    const ReductionPlan plan = ReductionPlan::build(ChunkLayout(batch, chunk), 1, 1, batch);
    const WorkerReduction& part = plan.workers.front();
    std::vector<ParamVector> buffers(static_cast<std::size_t>(plan.bufferCount), ParamVector(params.size(), 0.0f));
    std::vector<float*> stack;
    for (const int id : part.stackBuffers)
        stack.push_back(buffers[static_cast<std::size_t>(id)].data());
    std::vector<std::uint32_t> indices(batch);
    std::iota(indices.begin(), indices.end(), 0U);
    NetworkWorkspace workspace(spec, batch);
    const WorkerPass& pass = part.passes.front();
    const double perPass = bestSecondsPerCall([&] {
        workspace.pass(layout, params.data(), view, indices.data(), batch, 1.0f / batch, pass.program(), stack.data());
    });
    const double flopsPerSample = 2.0 * (784.0 * 256 + 256.0 * 128 + 128.0 * 10) * 3 - 2.0 * 784 * 256;
    Json j = Json::object();
    j["chunk"] = chunk;
    j["samples_per_s"] = std::round(batch / perPass);
    j["gflops"] = round2(batch * flopsPerSample / perPass / 1e9);
    return j;
}

} // namespace

int main(int argc, char** argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--seconds"))
            seconds = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps"))
            reps = std::atoi(argv[i + 1]);
    }
    Json paths = Json::array();
    for (const Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Scalar}) {
        if (!isaSupported(isa))
            continue;
        setActiveIsa(isa);
        const kernels::KernelTable& k = kernels::activeKernels();
        Json path = Json::object();
        path["path"] = isaName(isa);
        Json square = squareProducts(k);
        path["square_1024"] = square;
        Json steps = Json::array();
        for (const int chunk : {8, 64}) {
            Json step = fashionStep(chunk);
            step["share_of_square_forward"]
                = round2(step["gflops"].get<double>() / square["forward_gflops"].get<double>());
            steps.push_back(step);
        }
        path["fashion_pass_256"] = steps;
        std::fprintf(stderr, "%s\n", path.dump(-1).c_str());
        paths.push_back(path);
    }
    Json out = Json::object();
    out["benchmark"] = "training kernels";
    out["paths"] = paths;
    std::printf("%s\n", dumpJson(out, 2).c_str());
    return 0;
}
