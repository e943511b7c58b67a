// The bytes that travel between ranks (core/engines/mpi/MpiMessage.h), without MPI: MpiBytes holds what it was given
// through copies, moves and growth, and once a send was abandoned it frees nothing (the receiver may still read it);
// a message reads back what was packed.
#include "core/engines/mpi/MpiMessage.h"

#include <QTest>

#include <cstdlib>
#include <new>
#include <string>

namespace {
// This binary's own operator new and delete, to count what is freed.
int g_deletes = 0;
} // namespace

void* operator new(std::size_t size)
{
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept
{
    if (p != nullptr)
        ++g_deletes;
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    operator delete(p);
}

using namespace sgdscope;

namespace {
std::string textOf(const MpiBytes& b)
{
    return std::string(b.begin(), b.end());
}
} // namespace

class TestMpiMessage : public QObject
{
    Q_OBJECT
private slots:
    void bytesKeepWhatTheyHoldThroughCopiesMovesAndGrowth()
    {
        MpiBytes b;
        QVERIFY(b.empty());
        const std::string first = "parameters";
        b.append(first.data(), first.size());
        b.reserve(3); // never smaller
        QCOMPARE(textOf(b), first);
        const char* before = b.data();
        for (int i = 0; i < 100; ++i)
            b.append("x", 1);
        QVERIFY(b.data() != before); // it grew
        QCOMPARE(textOf(b), first + std::string(100, 'x'));
        MpiBytes copy(b);
        QVERIFY(copy.data() != b.data());
        QCOMPARE(textOf(copy), textOf(b));
        const char* held = b.data();
        MpiBytes moved(std::move(b));
        QVERIFY(moved.data() == held); // (pointers: QCOMPARE would compare char* as strings)
        QVERIFY(b.empty());
        copy = moved; // assignment by copy
        QCOMPARE(textOf(copy), textOf(moved));
        const MpiBytes& same = copy;
        copy = same; // onto itself
        QCOMPARE(textOf(copy), textOf(moved));
        MpiBytes zeros(4);
        QCOMPARE(textOf(zeros), std::string(4, '\0'));
        zeros.resize(2);
        zeros.resize(3); // the byte past the old size is zero again
        QCOMPARE(textOf(zeros), std::string(3, '\0'));
        zeros.clear();
        QVERIFY(zeros.empty());
    }

    void aMessageReadsBackWhatWasPacked()
    {
        MpiMessage m;
        m.put(std::int64_t(42));
        m.put(2.5);
        const float floats[3] = {1.0f, -2.0f, 0.25f};
        m.putFloats(floats, 3);
        MpiMessageReader in(m.bytes().data(), m.bytes().size());
        QCOMPARE(in.get<std::int64_t>(), std::int64_t(42));
        QCOMPARE(in.get<double>(), 2.5);
        float back[3] = {};
        in.getFloats(back, 3);
        QCOMPARE(back[1], -2.0f);
        QCOMPARE(back[2], 0.25f);
    }

    // Last: the flag stays set for the process (as in a job that is ending).
    void onceASendWasAbandonedNothingIsFreed()
    {
        MpiBytes grown(16);
        MpiBytes assigned(8);
        const char* first = grown.data();
        const int before = g_deletes;
        {
            MpiBytes control(8);
        }
        QCOMPARE(g_deletes, before + 1); // the count sees a free
        markMpiSendAbandoned();
        const int after = g_deletes;
        grown.reserve(1 << 16); // growth keeps the old buffer
        const char* second = grown.data();
        const char* third = assigned.data();
        assigned = MpiBytes(4); // assignment keeps the one it held
        const char* fourth = assigned.data();
        {
            MpiBytes gone(std::move(grown)); // destruction keeps it
        }
        const int freed = g_deletes - after;
        QVERIFY(second != first);
        QCOMPARE(freed, 0);
        // Kept on purpose by the code; given back here, so that the leak checker has nothing to say.
        for (const char* p : {first, second, third, fourth})
            std::free(const_cast<char*>(p));
    }
};

QTEST_APPLESS_MAIN(TestMpiMessage)
#include "test_mpi_message.moc"
