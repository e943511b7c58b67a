// Parameters in safetensors format: round trip, PyTorch names and shapes, and files that lie.
#include "core/common/Error.h"
#include "core/common/Json.h"
#include "core/io/Safetensors.h"
#include "core/nn/Initialization.h"
#include "core/nn/ModelText.h"
#include "core/nn/ParameterLayout.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstring>

using namespace sgdscope;

namespace {
NetworkSpec seedSpec()
{
    return NetworkSpec::mlp({1, 5, 1}, Activation::Tanh, LossKind::MeanSquaredError);
}

/// A file with the given header text and data size (the length field is computed).
std::string fileWith(const std::string& header, std::size_t dataBytes)
{
    std::string out;
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        out += static_cast<char>((n >> (8 * i)) & 0xff);
    return out + header + std::string(dataBytes, '\0');
}

const char* kSeedEntries = R"("0.weight":{"dtype":"F32","shape":[5,1],"data_offsets":[0,20]},)"
                           R"("0.bias":{"dtype":"F32","shape":[5],"data_offsets":[20,40]},)"
                           R"("2.weight":{"dtype":"F32","shape":[1,5],"data_offsets":[40,60]},)"
                           R"("2.bias":{"dtype":"F32","shape":[1],"data_offsets":[60,64]})";
} // namespace

class TestSafetensors : public QObject
{
    Q_OBJECT
private slots:
    // LeNet-5 (the fashion-cnn preset's model line) against a file PyTorch wrote (torch_peer.py net-oracle
    // --make-init, tests/data/README.md): the same tensor names in the same order, the same shapes and byte
    // ranges, so PyTorch's load_state_dict takes what we export; and its values come back bit for bit.
    void lenetExportMatchesPyTorchsOwnFile()
    {
        const NetworkSpec spec
            = networkFromModel(parseModelText("conv6x5x5p2,maxpool2,conv16x5x5,maxpool2,dense120,dense84,dense10"),
                TensorShape::image(1, 28, 28), Activation::Relu, LossKind::SoftmaxCrossEntropy);
        spec.check();
        const ParameterLayout layout(spec);
        QCOMPARE(layout.parameterCount(), std::size_t(61706));
        const std::string torchPath = SGDSCOPE_TEST_DATA "/lenet_oracle_init.safetensors";
        QFile torchFile(QString::fromStdString(torchPath));
        QVERIFY(torchFile.open(QIODevice::ReadOnly));
        const std::string torchBytes = torchFile.readAll().toStdString();
        QVERIFY(torchBytes.size() > 8);
        auto headerOf = [](const std::string& bytes) {
            std::uint64_t n = 0;
            std::memcpy(&n, bytes.data(), 8);
            return parseJson(bytes.substr(8, n), "header");
        };
        const ParamVector params = readSafetensors(torchPath, layout);
        const std::string ours = encodeSafetensors(layout, params.data());
        const Json torchHeader = headerOf(torchBytes);
        const Json ourHeader = headerOf(ours);
        std::vector<std::string> torchNames;
        for (const auto& [name, entry] : torchHeader.items())
            if (name != "__metadata__")
                torchNames.push_back(name);
        QCOMPARE(torchNames.size(), layout.tensors().size());
        // PyTorch's state_dict order is the layer order; our export writes the tensors in our layout's order.
        std::vector<std::pair<std::int64_t, std::string>> byOffset;
        for (const std::string& name : torchNames)
            byOffset.emplace_back(torchHeader.at(name).at("data_offsets").at(0).get<std::int64_t>(), name);
        std::sort(byOffset.begin(), byOffset.end());
        for (std::size_t i = 0; i < byOffset.size(); ++i) {
            const std::string& name = byOffset[i].second;
            QCOMPARE(layout.tensors()[i].name, name);
            QVERIFY2(ourHeader.contains(name), name.c_str());
            QCOMPARE(ourHeader.at(name).at("shape").dump(), torchHeader.at(name).at("shape").dump());
            QCOMPARE(ourHeader.at(name).at("data_offsets").dump(), torchHeader.at(name).at("data_offsets").dump());
            QCOMPARE(ourHeader.at(name).at("dtype").dump(), torchHeader.at(name).at("dtype").dump());
        }
        QCOMPARE(ourHeader.at("1.weight").at("shape").dump(), std::string("[6,1,5,5]"));
        QCOMPARE(ourHeader.at("12.bias").at("shape").dump(), std::string("[10]"));
        // The data bytes are PyTorch's, bit for bit (both files end with the same little-endian floats).
        const std::size_t dataBytes = layout.parameterCount() * sizeof(float);
        QCOMPARE(ours.substr(ours.size() - dataBytes), torchBytes.substr(torchBytes.size() - dataBytes));
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("lenet.safetensors")).toStdString();
        writeSafetensors(path, layout, params.data(), {});
        const ParamVector back = readSafetensors(path, layout);
        QCOMPARE(back.size(), params.size());
        QCOMPARE(std::memcmp(back.data(), params.data(), params.size() * sizeof(float)), 0);
    }

    void roundTripWithPyTorchNames()
    {
        const NetworkSpec spec = seedSpec();
        const ParameterLayout layout(spec);
        const ParamVector params = initialParameters(spec, layout, WeightInit::StandardNormal, 3);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("p.safetensors")).toStdString();
        writeSafetensors(path, layout, params.data(), {{"note", "test"}});
        const ParamVector back = readSafetensors(path, layout);
        QCOMPARE(std::memcmp(back.data(), params.data(), params.size() * sizeof(float)), 0);

        const std::string bytes = encodeSafetensors(layout, params.data());
        std::uint64_t n = 0;
        std::memcpy(&n, bytes.data(), 8);
        QCOMPARE(n % 8, std::uint64_t(0));
        const Json header = parseJson(bytes.substr(8, n), "header");
        QCOMPARE(header.at("0.weight").at("shape").dump(), std::string("[5,1]"));
        QCOMPARE(header.at("2.weight").at("shape").dump(), std::string("[1,5]"));
        QCOMPARE(header.at("2.bias").at("data_offsets").dump(), std::string("[60,64]"));
        QCOMPARE(bytes.size(), std::size_t(8 + n + 64));
    }

    void readsThePyTorchOracle()
    {
        const ParameterLayout layout(seedSpec());
        const ParamVector f32 = readSafetensors(SGDSCOPE_TEST_DATA "/oracle_init_seed0.safetensors", layout);
        const ParamVector f64 = readSafetensors(SGDSCOPE_TEST_DATA "/oracle_final_f64.safetensors", layout);
        QVERIFY(f32[layout.weight(0).offset] != 0.0f);
        QVERIFY(std::isfinite(f64[layout.bias(1).offset]));
    }

    void acceptsTheMinimalValidFile()
    {
        const ParameterLayout layout(seedSpec());
        decodeSafetensors(fileWith(std::string("{") + kSeedEntries + "}", 64), "ok", layout);
    }

    void rejectsLies_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("needle");
        auto add = [](const char* name, const std::string& bytes, const char* needle) {
            QTest::addRow("%s", name) << QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size()))
                                      << QString::fromLatin1(needle);
        };
        const std::string entries = kSeedEntries;
        add("too-short", "abc", "too short");
        std::string huge(8, '\0');
        huge[7] = 0x7f;
        add("header-length-over-limit", huge + "{}", "over the 100 MB limit");
        std::string past(8, '\0');
        past[0] = 100;
        add("header-past-end", past + "{}", "runs past the end");
        add("not-json", fileWith("{nope", 64), "header");
        add("not-object", fileWith("[1,2]", 0), "not a JSON object");
        add("overlap",
            fileWith(
                R"({"0.weight":{"dtype":"F32","shape":[5,1],"data_offsets":[0,20]},"0.bias":{"dtype":"F32","shape":[5],"data_offsets":[16,36]}})",
                36),
            "without gaps or overlaps");
        add("gap",
            fileWith(
                R"({"0.weight":{"dtype":"F32","shape":[5,1],"data_offsets":[0,20]},"0.bias":{"dtype":"F32","shape":[5],"data_offsets":[24,44]}})",
                44),
            "without gaps or overlaps");
        add("past-end", fileWith("{" + entries + "}", 60), "cover 64 data bytes but the file holds 60");
        add("shape-vs-bytes", fileWith(R"({"0.weight":{"dtype":"F32","shape":[5,2],"data_offsets":[0,20]}})", 20),
            "but data_offsets cover 20 bytes");
        add("reversed-offsets", fileWith(R"({"0.weight":{"dtype":"F32","shape":[0],"data_offsets":[20,0]}})", 20),
            "end before they begin");
        add("dtype", fileWith(R"({"0.weight":{"dtype":"I8","shape":[5,1],"data_offsets":[0,5]}})", 5), "dtype I8");
        add("metadata-not-string", fileWith(R"({"__metadata__":{"a":1},)" + entries + "}", 64), "must be strings");
        add("missing-tensor", fileWith(R"({"0.weight":{"dtype":"F32","shape":[5,1],"data_offsets":[0,20]}})", 20),
            "has no tensor \"0.bias\"");
        std::string wrongShape = entries;
        wrongShape.replace(wrongShape.find("[5,1]"), 5, "[1,5]");
        add("model-shape", fileWith("{" + wrongShape + "}", 64), "the model needs [5, 1]");
        add("extra-tensor",
            fileWith("{" + entries + R"(,"4.weight":{"dtype":"F32","shape":[1],"data_offsets":[64,68]}})", 68),
            "does not have");
        add("negative-shape", fileWith(R"({"0.weight":{"dtype":"F32","shape":[-5,1],"data_offsets":[0,20]}})", 20),
            "not a non-negative integer");
        add("huge-shape",
            fileWith(R"({"0.weight":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,20]}})", 20),
            "impossibly large");
    }

    void rejectsLies()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, needle);
        const ParameterLayout layout(seedSpec());
        try {
            decodeSafetensors(
                std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())), "parameter file 'x'", layout);
        } catch (const SgdError& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.contains(needle), qPrintable(message));
            QVERIFY(message.startsWith(QStringLiteral("parameter file 'x'")));
            return;
        }
        QFAIL("accepted a file that lies");
    }
};

QTEST_GUILESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
