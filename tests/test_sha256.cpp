// SHA-256 (Nettle, through io/Sha256.h) against the FIPS 180-4 / NIST known answers, fed whole and in
// pieces that straddle the 64-byte blocks, as params_digest feeds it tensor by tensor.
#include "core/io/Sha256.h"

#include <QTest>

#include <string>

using namespace sgdscope;

namespace {
std::string digestOf(const std::string& message, std::size_t piece)
{
    Sha256 sha;
    for (std::size_t at = 0; at < message.size(); at += piece)
        sha.update(message.data() + at, std::min(piece, message.size() - at));
    return sha.finishHex();
}
} // namespace

class TestSha256 : public QObject
{
    Q_OBJECT
private slots:
    void knownAnswers_data()
    {
        QTest::addColumn<QByteArray>("message");
        QTest::addColumn<QString>("digest");
        // FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
        QTest::addRow("empty") << QByteArray()
                               << QStringLiteral("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        QTest::addRow("abc") << QByteArray("abc")
                             << QStringLiteral("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        QTest::addRow("448 bits") << QByteArray("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                                  << QStringLiteral("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        QTest::addRow("896 bits") << QByteArray(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopq"
            "rsmnopqrstnopqrstu") << QStringLiteral("cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
        QTest::addRow("one million a") << QByteArray(
            1000000, 'a') << QStringLiteral("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }

    void knownAnswers()
    {
        QFETCH(QByteArray, message);
        QFETCH(QString, digest);
        const std::string text(message.constData(), static_cast<std::size_t>(message.size()));
        for (const std::size_t piece :
            {std::size_t(1), std::size_t(63), std::size_t(64), std::size_t(1000), text.size() + 1})
            QCOMPARE(QString::fromStdString(digestOf(text, piece)), digest);
    }
};

QTEST_GUILESS_MAIN(TestSha256)
#include "test_sha256.moc"
