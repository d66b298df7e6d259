// SPDX-License-Identifier: GPL-2.0-or-later
// Opening a big capture in the GUI: a synthetic capture with 100k distinct
// kernel stacks over 200 locks. Each iteration measures, side by side,
// the bare lockscope::readCapture of the file and the GUI path from
// MainWindow::openCapture to the first painted frame (background load, lock
// table, call trees, flame graph, charts), with the peak RSS of each.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <malloc.h>

#include <QApplication>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <benchmark/benchmark.h>

#include "app/capturepage.h"
#include "app/mainwindow.h"
#include "app/processheap.h"
#include "lockscope/capture/io.h"

using namespace lockscope;

namespace {
constexpr uint32_t kStacks = 100000;
constexpr uint32_t kLocks = 200;

Capture bigCapture()
{
    Capture c;
    c.meta.label = "bench";
    c.meta.kernel_release = "6.18.0";
    c.meta.cpu_count = 2;
    c.meta.duration_s = 10;
    const char* syscalls[] = {"__x64_sys_semtimedop", "__x64_sys_rename", "__x64_sys_timer_settime",
                              "__x64_sys_futex", "__x64_sys_write", "__x64_sys_read"};
    const char* mids[] = {"do_semtimedop", "lock_rename", "__lock_timer", "futex_wait", "vfs_write", "ksys_read",
                          "ipcget", "sem_lock", "d_move", "path_openat"};
    uint64_t seed = 42;
    auto next = [&seed] {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return seed >> 33;
    };
    c.stacks.reserve(kStacks);
    for (uint32_t id = 1; id <= kStacks; ++id) {
        Stack s;
        s.id = id;
        // innermost first: lock function, distinct helper, mids..., syscall, entry
        s.frames.push_back({"_raw_spin_lock", 0x1c, "", 0xffffffff81000000ull + id});
        s.frames.push_back({"helper_" + std::to_string(id % 5000), 0x40, "", std::nullopt});
        s.frames.push_back({"mid_" + std::to_string(id % 97), 0x10, "", std::nullopt});
        for (int d = 0; d < 3; ++d)
            s.frames.push_back({mids[next() % 10], 0x20, "", std::nullopt});
        s.frames.push_back({syscalls[id % 6], 0x8, "", std::nullopt});
        s.frames.push_back({"do_syscall_64", 0x5e, "", std::nullopt});
        s.frames.push_back({"entry_SYSCALL_64", 0x76, "", std::nullopt});
        c.stacks.push_back(std::move(s));
    }
    for (uint32_t l = 0; l < kLocks; ++l) {
        Lock lock;
        lock.key = "spinlock@site_" + std::to_string(l);
        lock.type = "spinlock";
        for (uint32_t id = 1 + l; id <= kStacks; id += kLocks) {
            LockSite site;
            site.stack_id = id;
            site.wait.add(500 + next() % 100000, 1 + next() % 50);
            site.hold.add(200 + next() % 20000, 1 + next() % 50);
            lock.wait.merge(site.wait);
            lock.hold.merge(site.hold);
            lock.sites.push_back(std::move(site));
        }
        c.locks.push_back(std::move(lock));
    }
    return c;
}

long vmHwmKb()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stol(line.substr(6));
    }
    return -1;
}

void resetPeak()
{
    // On the app's one heap (useGuiHeap) what the last step freed stays
    // resident until trimmed, and would count as this step's peak.
    malloc_trim(0);
    // "5" resets VmHWM to the current RSS (Linux >= 4.0).
    std::ofstream("/proc/self/clear_refs") << "5";
}

QString gPath;

void BM_OpenToFirstPaint(benchmark::State& state)
{
    double readTotal = 0, paintTotal = 0;
    long peakKb = 0, readPeakKb = 0;
    for (auto _ : state) {
        resetPeak();
        const auto t0 = std::chrono::steady_clock::now();
        Capture bare = readCapture(gPath.toStdString());
        benchmark::DoNotOptimize(bare.stacks.data());
        const auto t1 = std::chrono::steady_clock::now();
        readPeakKb = std::max(readPeakKb, vmHwmKb());
        bare = Capture{};

        resetPeak();
        const auto t2 = std::chrono::steady_clock::now();
        {
            gui::MainWindow w;
            w.resize(1400, 900);
            w.show();
            QSignalSpy shown(&w, &gui::MainWindow::captureShown);
            w.openCapture(gPath);
            if (!shown.wait(600000)) {
                state.SkipWithError("capture did not load");
                return;
            }
            w.repaint(); // the first full frame with the data
            const auto t3 = std::chrono::steady_clock::now();
            peakKb = std::max(peakKb, vmHwmKb());
            const double read = std::chrono::duration<double>(t1 - t0).count();
            const double paint = std::chrono::duration<double>(t3 - t2).count();
            readTotal += read;
            paintTotal += paint;
            state.SetIterationTime(paint);
        }
    }
    const double n = static_cast<double>(state.iterations());
    state.counters["read_only_s"] = readTotal / n;
    state.counters["first_paint_s"] = paintTotal / n;
    state.counters["paint_over_read"] = readTotal > 0 ? paintTotal / readTotal : 0;
    state.counters["peak_rss_MiB"] = static_cast<double>(peakKb) / 1024.0;
    state.counters["read_peak_rss_MiB"] = static_cast<double>(readPeakKb) / 1024.0;
    state.counters["stacks"] = kStacks;
}
// The two halves of showing a read capture: the preparation the loader runs
// on a worker thread (report, both all-lock call trees), and what is left for
// the UI thread (models, flame graph, charts).
void BM_PrepareOnWorker(benchmark::State& state)
{
    const auto capture = std::make_shared<const Capture>(readCapture(gPath.toStdString()));
    for (auto _ : state) {
        auto prepared = gui::prepareCapture(capture);
        benchmark::DoNotOptimize(prepared.topDown.get());
    }
}
BENCHMARK(BM_PrepareOnWorker)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ShowOnUiThread(benchmark::State& state)
{
    const auto prepared = gui::prepareCapture(std::make_shared<const Capture>(readCapture(gPath.toStdString())));
    gui::CapturePage page;
    page.resize(1400, 900);
    for (auto _ : state) {
        page.setPrepared(prepared);
        benchmark::DoNotOptimize(page.capture());
    }
}
BENCHMARK(BM_ShowOnUiThread)->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK(BM_OpenToFirstPaint)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
} // namespace

int main(int argc, char** argv)
{
    gui::useGuiHeap(argv); // the heap lockscope-gui opens captures on
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir dir;
    gPath = dir.filePath(QStringLiteral("big.lockscope.json"));
    writeCapture(bigCapture(), gPath.toStdString());
    std::fprintf(stderr, "synthetic capture: %u stacks, %u locks, %lld bytes\n", kStacks, kLocks,
                 static_cast<long long>(QFileInfo(gPath).size()));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
