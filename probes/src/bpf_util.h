// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Small helpers around libbpf shared by the probe families: error text,
// environment checks, map reading and the kernel-side histogram conversion.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <bpf/bpf.h>

#include "lockscope/capture/histogram.h"
#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

struct bpf_program;

namespace lockscope::probes::detail {

// "Operation not permitted (EPERM)" for a positive or negative errno.
std::string errnoText(int err);

// Routes libbpf's messages into a buffer (verifier logs are long) instead of
// stderr; lastLibbpfError() gives its last meaningful line for a status reason.
void installLibbpfLogger();
void clearLibbpfLog();
std::string lastLibbpfError();

// Throws ProbeError when the process cannot use BPF or the kernel has no BTF.
void checkEnvironment();

// Mounts tracefs on /sys/kernel/tracing when nothing is mounted there (the
// tracepoint hooks need it). Returns a note for the status, empty if nothing done.
std::string ensureTracefs();

// Whether the running kernel has a traceable function called name; reason set when not.
bool kernelHasFunction(const std::string& name, std::string* reason);
// In the running kernel's BTF as a function (what fentry/fexit can attach to).
bool btfHasFunction(const std::string& name);
// Its BTF id in the running kernel (vmlinux BTF parsed once), -1 if none.
int btfFunctionId(const std::string& name);
// Empty when kprobes can be attached at all, else why not.
std::string kprobeUnavailableReason();

int possibleCpus();

// Every key of a hash map, walked before any is deleted: deleting while
// walking with get_next_key restarts the walk.
template <class Key> std::vector<Key> keysOf(int fd)
{
    std::vector<Key> keys;
    Key key {}, next {};
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
        key = next;
        prev = &key;
        keys.push_back(key);
    }
    return keys;
}

// Sum of a per-CPU u64 array slot.
uint64_t sumPerCpu(int map_fd, uint32_t key, int ncpus);
uint64_t recursionMisses(const bpf_program* prog);
uint64_t recursionMisses(int prog_fd);

// A kernel-side histogram read while probes may still be updating it: counts
// are taken from the buckets and min/max/total clamped into them, so the
// result is always consistent().
Log2Hist histFromKernel(const ls_hist& h);

// common.bpf.h's hist_template: a histogram with nothing in it yet (a CPU's
// copy of a key before its first wait, or a sum before its first copy).
ls_hist emptyHist();

// The per-CPU copies of one histogram (hist_add_cpu) summed; a copy whose
// count is 0 has no min.
ls_hist sumCpuHists(const std::vector<ls_hist>& cpus);
// The per-CPU copies of one latency slot (syscalls, functions) summed.
ls_lat_val mergeCpus(const std::vector<ls_lat_val>& cpus);

// The JIT-compiled code of a loaded program and its subprograms; empty when
// the kernel hides the addresses (kptr_restrict) or did not JIT-compile it.
std::vector<ProgramCode> jitCode(int prog_fd);

// A budget of stack walks per second as walks per LS_STACK_WINDOW_NS window
// (rounded up, at least 1); 0 stays 0, no budget.
uint32_t stackWindowWalks(uint32_t per_second);

// libbpf 1.x returns NULL and sets errno on failed attach.
std::string attachError();

// Waits until no BPF program that began before the call still runs (an RCU
// grace period, by membarrier), so a drain can read what they no longer
// write. False when the kernel cannot say (nohz_full).
bool waitForRunningPrograms();

// Moves a drained table's generation on (its programs file into the new
// parity from now on); returns the parity closed, to read once settled.
uint32_t closeGeneration(volatile uint32_t* gen);
// Waits until no program that read a generation before it was closed still
// runs; where the kernel cannot say (nohz_full), sleeps 20 ms, well past the
// microseconds a program runs.
void settleGenerations();

// A drain generation just closed: its parity, and whether the grace period
// after it passed (waitForRunningPrograms), so no program files into it.
struct ClosedGeneration {
    uint32_t bit = 0;
    bool settled = false;
};

// The closed generation's entries of a hash map whose keys carry their
// generation (inClosed(key)), each read into value (one copy per CPU for a
// per-CPU map) and handed to take(key, value), which files it and says
// whether it held anything. Those that did are emptied in place: a busy key
// stays for the next window's first events to find (deleted, such keys were
// created again in a burst the per-CPU element cache refused); those that
// did not are deleted. Not settled, every entry is read and deleted in one
// step, which loses what a program adds between the two.
template <class Key, class Value, class InClosed, class Take>
void drainGeneration(int fd, bool settled, InClosed inClosed, std::vector<Value>& value,
    const std::vector<Value>& empty, Take take)
{
    for (const Key& key : keysOf<Key>(fd)) {
        if (!settled) {
            if (bpf_map_lookup_and_delete_elem(fd, &key, value.data()) == 0)
                take(key, value);
            continue;
        }
        if (!inClosed(key) || bpf_map_lookup_elem(fd, &key, value.data()) != 0)
            continue; // the open generation's, or deleted meanwhile
        if (take(key, value))
            bpf_map_update_elem(fd, &key, empty.data(), BPF_EXIST);
        else
            bpf_map_delete_elem(fd, &key);
    }
}

} // namespace lockscope::probes::detail
