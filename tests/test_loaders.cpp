// CSV and IDX loaders on small files the test writes: valid ones, and truncated, wrong-magic, wrong-count,
// non-numeric and empty ones. Every bad file is rejected with a message naming the file and the place.
#include "core/common/Error.h"
#include "core/common/Rng.h"
#include "core/data/CsvLoader.h"
#include "core/data/Dataset.h"
#include "core/data/GeneratedData.h"
#include "core/data/IdxLoader.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <zlib.h>

#include <filesystem>

using namespace sgdscope;

namespace {

std::string gzip(const std::string& plain)
{
    z_stream zs {};
    deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&zs, static_cast<uLong>(plain.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    zs.avail_in = static_cast<uInt>(plain.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

std::string idx(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data, std::uint8_t type = 0x08)
{
    std::string s = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
    for (const auto d : dims) {
        for (int shift = 24; shift >= 0; shift -= 8)
            s += static_cast<char>((d >> shift) & 0xff);
    }
    s.append(data.begin(), data.end());
    return s;
}

std::string images3()
{
    std::vector<std::uint8_t> pixels;
    for (int i = 0; i < 12; ++i)
        pixels.push_back(static_cast<std::uint8_t>(i * 20));
    return idx({3, 2, 2}, pixels);
}

std::string labels3()
{
    return idx({3}, {2, 0, 1});
}

/// Calls f, which must throw SgdError whose message contains every one of `needles`.
template<typename F>
void expectError(F&& f, std::initializer_list<const char*> needles)
{
    try {
        f();
    } catch (const SgdError& e) {
        const std::string message = e.what();
        for (const char* needle : needles) {
            if (message.find(needle) == std::string::npos)
                QFAIL(qPrintable(QStringLiteral("message \"%1\" lacks \"%2\"")
                                     .arg(QString::fromStdString(message), QLatin1String(needle))));
        }
        return;
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("wrong exception type: %1").arg(QLatin1String(e.what()))));
    }
    QFAIL("no error for a bad file");
}

} // namespace

class TestLoaders : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    std::string write(const char* name, const std::string& bytes)
    {
        const QString path = m_dir.filePath(QLatin1String(name));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            qFatal("cannot write test file");
        f.write(bytes.data(), static_cast<qint64>(bytes.size()));
        return path.toStdString();
    }

private slots:
    void csvWithHeaderAndNamedTargets()
    {
        const std::string path = write("a.csv", "x1, x2 ,y\n1,2,3\n\n4,5e-1,-6\n");
        CsvOptions o;
        o.targets = {"y"};
        const Dataset d = loadCsv(path, o);
        QCOMPARE(d.size(), std::int64_t(2));
        QCOMPARE(d.features(), 2);
        QCOMPARE(d.inputs(1, 1), 0.5f);
        QCOMPARE(d.targets(0, 1), -6.0f);
        QVERIFY(!d.isClassification());
    }

    void csvWithoutHeaderTargetsByIndex()
    {
        const std::string path = write("b.csv", "1,2,3\n4,5,6\n7,8,9\n");
        CsvOptions o;
        o.targets = {"0", "2"};
        const Dataset d = loadCsv(path, o);
        QCOMPARE(d.size(), std::int64_t(3));
        QCOMPARE(d.features(), 1);
        QCOMPARE(d.inputs(0, 2), 8.0f);
        QCOMPARE(d.targets.rows(), Eigen::Index(2));
        QCOMPARE(d.targets(0, 0), 1.0f);
        QCOMPARE(d.targets(1, 2), 9.0f);
    }

    void csvClassLabels()
    {
        const std::string path = write("c.csv", "0.5,1\n0.25,0\n1.5,3\n");
        CsvOptions o;
        o.classification = true;
        const Dataset d = loadCsv(path, o);
        QCOMPARE(d.classes, 4);
        QCOMPARE(d.labels[2], 3);
        expectError([&] { loadCsv(write("c2.csv", "0.5,1.5\n"), o); }, {"c2.csv", "line 1", "column 2", "class label"});
    }

    void csvErrors()
    {
        CsvOptions o;
        expectError([&] { loadCsv(write("empty.csv", ""), o); }, {"empty.csv", "empty"});
        expectError([&] { loadCsv(write("blank.csv", "\n\n  \n"), o); }, {"blank.csv", "empty"});
        expectError([&] { loadCsv(write("nan.csv", "1,2\n3,abc\n"), o); },
            {"nan.csv", "line 2", "column 2", "'abc'", "not a finite number"});
        expectError([&] { loadCsv(write("nonfinite.csv", "1,2\n3,inf\n"), o); }, {"nonfinite.csv", "line 2", "'inf'"});
        expectError(
            [&] { loadCsv(write("ragged.csv", "1,2,3\n4,5\n"), o); }, {"ragged.csv", "line 2", "2 fields, expected 3"});
        expectError([&] { loadCsv(write("header.csv", "a,b\n"), o); }, {"header.csv", "no data rows"});
        expectError([&] { loadCsv(write("one.csv", "1\n2\n"), o); }, {"one.csv", "at least 2"});
        expectError([&] { loadCsv(m_dir.filePath(QStringLiteral("missing.csv")).toStdString(), o); },
            {"missing.csv", "cannot open"});
        CsvOptions t;
        t.targets = {"zz"};
        expectError([&] { loadCsv(write("t.csv", "a,b\n1,2\n"), t); }, {"--targets", "'zz'"});
        t.targets = {"7"};
        expectError([&] { loadCsv(write("t2.csv", "1,2\n"), t); }, {"--targets", "column 7"});
    }

    void idxPlainAndGzipped()
    {
        for (const bool gz : {false, true}) {
            const std::string path = write(gz ? "img.gz" : "img", gz ? gzip(images3()) : images3());
            const IdxArray a = readIdx(path);
            QCOMPARE(a.dims.size(), std::size_t(3));
            QCOMPARE(a.dims[0], 3u);
            QCOMPARE(a.data.size(), std::size_t(12));
            QCOMPARE(a.data[11], std::uint8_t(220));
        }
        const Dataset d
            = idxToDataset(parseIdx(images3(), "images"), parseIdx(labels3(), "labels"), "tiny", "images", "labels");
        QCOMPARE(d.size(), std::int64_t(3));
        QCOMPARE(d.features(), 4);
        QCOMPARE(d.classes, 3);
        QCOMPARE(d.inputs(3, 2), 220.0f / 255.0f);
        QCOMPARE(d.labels[0], 2);
    }

    void idxErrors()
    {
        const std::string good = images3();
        expectError([&] { readIdx(write("e0", "")); }, {"'", "e0", "empty"});
        expectError([&] { readIdx(write("e1", good.substr(0, 3))); }, {"e1", "truncated at byte 3", "magic"});
        expectError([&] { readIdx(write("e2", std::string("\x1f\x00\x08\x01rest", 8))); },
            {"e2", "wrong magic number at byte 0"});
        std::string wrongType = good;
        wrongType[2] = 0x0D;
        expectError([&] { readIdx(write("e3", wrongType)); }, {"e3", "data type 0x0d", "unsigned bytes"});
        expectError(
            [&] { readIdx(write("e4", good.substr(0, 10))); }, {"e4", "truncated at byte 10", "dimension 2 of 3"});
        expectError([&] { readIdx(write("e5", good.substr(0, good.size() - 5))); },
            {"e5", "truncated", "12 data bytes", "ends at byte 23"});
        expectError(
            [&] { readIdx(write("e6", good + "xy")); }, {"e6", "2 unexpected bytes after the data, from byte 28"});
        expectError([&] { readIdx(write("e7", idx({2, 0}, {}))); }, {"e7", "dimension 2", "is 0"});
        // gzipped: truncated, trailing data, corrupt
        const std::string gz = gzip(good);
        expectError([&] { readIdx(write("g1.gz", gz.substr(0, gz.size() / 2))); }, {"g1.gz", "truncated"});
        expectError([&] { readIdx(write("g2.gz", gzip(good + "extra"))); }, {"g2.gz", "unexpected data after byte 28"});
        std::string corrupt = gz;
        corrupt[corrupt.size() - 6] ^= 0x55; // the CRC
        expectError([&] { readIdx(write("g3.gz", corrupt)); }, {"g3.gz", "corrupt"});
        expectError([&] { readIdx(write("g4.gz", gzip(good.substr(0, 20)))); }, {"g4.gz", "truncated"});
        // counts that disagree
        expectError(
            [&] {
                idxToDataset(parseIdx(good, "img"), parseIdx(idx({4}, {0, 1, 2, 3}), "lab"), "x", "img", "lab");
            },
            {"lab", "4 labels", "3 images"});
        expectError([&] { idxToDataset(parseIdx(good, "img"), parseIdx(good, "lab"), "x", "img", "lab"); },
            {"lab", "exactly 1"});
    }

    // Thousands of random corruptions of valid files: each either loads or is rejected with SgdError.
    void randomCorruptionsNeverCrash()
    {
        Rng rng(2024);
        const std::string sources[] = {images3(), gzip(images3()), labels3(), std::string("a,b,c\n1,2,3\n4,5,6\n")};
        int rejected = 0;
        for (int round = 0; round < 4000; ++round) {
            std::string bytes = sources[round % 4];
            const int edits = 1 + static_cast<int>(rng.below(4));
            for (int e = 0; e < edits; ++e) {
                const auto pos = static_cast<std::size_t>(rng.below(bytes.size() + 1));
                switch (rng.below(3)) {
                case 0:
                    if (pos < bytes.size())
                        bytes[pos] = static_cast<char>(rng.below(256));
                    break;
                case 1:
                    bytes.insert(pos, 1, static_cast<char>(rng.below(256)));
                    break;
                default:
                    bytes.erase(pos, 1 + rng.below(8));
                }
            }
            try {
                if (round % 4 == 3)
                    parseCsv(bytes, "fuzz.csv", CsvOptions {});
                else
                    parseIdx(bytes, "fuzz.idx", 1 << 20);
            } catch (const SgdError&) {
                ++rejected;
            }
        }
        QVERIFY(rejected > 1000);
    }

    void fashionMnistAsDebianInstallsIt()
    {
        if (!std::filesystem::exists(std::string(debianFashionMnistFolder) + "/train-images-idx3-ubyte.gz"))
            QSKIP("dataset-fashion-mnist is not installed");
        const DataSplit split = loadIdxFolder(debianFashionMnistFolder, "fashion-mnist");
        QCOMPARE(split.train.size(), std::int64_t(60000));
        QCOMPARE(split.train.features(), 784);
        QCOMPARE(split.train.classes, 10);
        QVERIFY(split.test.has_value());
        QCOMPARE(split.test->size(), std::int64_t(10000));
        QCOMPARE(split.train.inputs.minCoeff(), 0.0f);
        QCOMPARE(split.train.inputs.maxCoeff(), 1.0f);
    }
};

QTEST_GUILESS_MAIN(TestLoaders)
#include "test_loaders.moc"
