#pragma once
// Running sgdscope under mpirun from the MPI engine's tests (test_mpi_*): every process on this machine's cores,
// --oversubscribe, as root where CI runs; and the models and options they share. SGDSCOPE_MPIEXEC names mpirun.

#include "AppRuns.h"
#include "core/common/Json.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <QTest>

namespace sgdscope::testing {

/// How an mpirun (or a plain sgdscope) process ended, what it printed, and how long it took.
struct Result
{
    int exitCode = -1;
    QString output; // stdout and stderr, merged (mpirun prints its own messages on either)
    qint64 milliseconds = 0;
};

/// mpirun's own arguments for `processes` processes of sgdscope (theirs follow).
inline QStringList mpirunArgs(int processes)
{
    return {QStringLiteral("--oversubscribe"), QStringLiteral("--bind-to"), QStringLiteral("none"),
        QStringLiteral("-np"), QString::number(processes), QStringLiteral(SGDSCOPE_BINARY)};
}

/// Sets up a process for mpirun: as root where CI runs, with its outputs merged.
inline void prepare(QProcess& p)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
    // Under AddressSanitizer: Open MPI leaks at MPI_Finalize (in plugins it has unloaded by then, so no
    // suppression can name them); the ranks' leak check is off, everything else stays on.
    if (env.contains(QStringLiteral("ASAN_OPTIONS")))
        env.insert(QStringLiteral("ASAN_OPTIONS"),
            env.value(QStringLiteral("ASAN_OPTIONS")) + QStringLiteral(":detect_leaks=0"));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
}

/// Waits for a started process, killing it after `timeoutMs` (exit code -1).
inline Result finish(QProcess& p, const QElapsedTimer& clock, int timeoutMs)
{
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.output = QString::fromUtf8(p.readAll());
        r.milliseconds = clock.elapsed();
        return r;
    }
    r.milliseconds = clock.elapsed();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.output = QString::fromUtf8(p.readAll());
    // Every run's sends complete unless it failed (MpiJob checks; a send left to MPI stops the freeing of buffers).
    if (r.output.contains(QStringLiteral("internal error: a run that did not fail left a send unfinished")))
        QTest::qFail(qPrintable(r.output), __FILE__, __LINE__);
    return r;
}

/// Runs mpirun with `args`.
inline Result mpirun(const QStringList& args, int timeoutMs = 120000)
{
    QProcess p;
    prepare(p);
    QElapsedTimer clock;
    clock.start();
    p.start(QStringLiteral(SGDSCOPE_MPIEXEC), args);
    return finish(p, clock, timeoutMs);
}

/// Runs sgdscope --headless --engine mpi with `options` in `processes` processes.
inline Result runMpi(int processes, const QStringList& options, int timeoutMs = 120000)
{
    return mpirun(mpirunArgs(processes)
            + QStringList {QStringLiteral("--headless"), QStringLiteral("--engine"), QStringLiteral("mpi")} + options,
        timeoutMs);
}

/// Runs sgdscope --headless with `options` as one process (the threads engine's reference).
inline Result runThreads(const QStringList& options)
{
    QProcess p;
    QElapsedTimer clock;
    clock.start();
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(SGDSCOPE_BINARY), QStringList {QStringLiteral("--headless")} + options);
    return finish(p, clock, 120000);
}

/// The run of `mode` in a summary.json (nullptr if none).
inline const Json* runOf(const Json& summary, const char* mode)
{
    if (!summary.is_object() || !summary.contains("runs"))
        return nullptr;
    for (const Json& r : summary["runs"]) {
        if (r["mode"] == mode)
            return &r;
    }
    return nullptr;
}

/// Blobs with a model large enough for BLAS products, a batch of `batch` samples.
inline QStringList blasModelWithBatch(int batch)
{
    return {QStringLiteral("--preset"), QStringLiteral("blobs"), QStringLiteral("--layers"),
        QStringLiteral("64,256,256,10"), QStringLiteral("--samples"), QStringLiteral("2048"), QStringLiteral("--batch"),
        QString::number(batch), QStringLiteral("--chunk"), QStringLiteral("64"), QStringLiteral("--momentum"),
        QStringLiteral("0.9")};
}
inline const QStringList blasModel = blasModelWithBatch(512);

/// Blobs read as 8 x 8 images by a small convolutional network (convolutions, pooling, a flatten).
inline const QStringList convModel {QStringLiteral("--preset"), QStringLiteral("blobs"), QStringLiteral("--model"),
    QStringLiteral("input1x8x8,conv4x3x3p1,maxpool2,conv6x3x3,dense10"), QStringLiteral("--activation"),
    QStringLiteral("relu"), QStringLiteral("--samples"), QStringLiteral("2048"), QStringLiteral("--batch"),
    QStringLiteral("256"), QStringLiteral("--momentum"), QStringLiteral("0.9")};

/// The parabola with a batch of 50 in chunks of 5 and two micro-batches.
inline const QStringList parabola {QStringLiteral("--preset"), QStringLiteral("parabola"), QStringLiteral("--batch"),
    QStringLiteral("50"), QStringLiteral("--chunk"), QStringLiteral("5"), QStringLiteral("--accum"),
    QStringLiteral("2")};

} // namespace sgdscope::testing
