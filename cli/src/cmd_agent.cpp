// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope agent`: record the whole system (or a cgroup) without end and
// serve the figures over HTTP (docs/agent.md).
#include <chrono>
#include <csignal>
#include <malloc.h>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>

#include "commands.h"
#include "option_checks.h"
#include "probe_args.h"
#include "lockscope/agent/agent.h"
#include "lockscope/agent/http_server.h"
#include "lockscope/agent/web_config.h"
#include "lockscope/record/cgroup_paths.h"
#include "lockscope/record/live_recording.h"

namespace lockscope::cli {
namespace {

struct AgentArgs {
    std::string listen = "127.0.0.1:9755";
    std::string web_config;
    std::string cgroup;
    std::string wait_backend = "auto";
    double window = 10;
    size_t metrics_top = 50;
    unsigned stack_depth = 16;
    unsigned stack_budget = 1000;    // as record's defaults (cmd_record.cpp says why)
    unsigned timing_budget = 20000;
    // Contended waits a second per CPU worth 1% of a CPU on the record bench's
    // hottest load (bench/record/README.md, "wait rate cap"): above it the wait
    // programs attach for part of the time.
    unsigned wait_rate_cap = 15000;
    // Parca Agent's rate: always on, a fleet's profiles sum windows and
    // machines, so a tenth of record's rate (and of its timer interrupts,
    // ~50 us each in a VM) still gives a share within a few percent per window.
    unsigned freq = 19;
    int max_profile_requests = 4;
    bool per_cgroup = false;
    bool lock_names = true;
    bool lock_owner = false;
    bool no_cpu = false;
    OptInArgs optin;
};

record::RecordOptions recordOptions(const AgentArgs& a)
{
    record::RecordOptions o;
    o.all = true;
    o.status_line = false;
    o.label = "agent";
    auto& p = o.probe;
    p.stack_depth = a.stack_depth;
    p.stack_budget = a.stack_budget;
    p.timing_budget = a.timing_budget;
    p.wait_rate_cap = a.wait_rate_cap;
    p.cpu_frequency_hz = a.no_cpu ? 0 : a.freq;
    p.per_cgroup = a.per_cgroup;
    p.lock_names = a.lock_names;
    p.lock_owner = a.lock_owner;
    p.drain = true; // read out every window: the hold tables in halves
    p.wait = parseBackend("--wait-backend", a.wait_backend, probes::HookFamily::Wait);
    applyOptIn(a.optin, false, p);
    try {
        if (a.per_cgroup)
            record::cgroup2Mount();
        if (!a.cgroup.empty()) {
            const record::CgroupTarget t = record::cgroupTarget(a.cgroup);
            p.cgroup_id = t.id;
            p.cgroup_level = t.level;
            o.cgroup = a.cgroup;
        }
    } catch (const record::CgroupError& e) {
        throw CLI::ValidationError(a.per_cgroup && a.cgroup.empty() ? "--per-cgroup" : "--cgroup", e.what());
    }
    return o;
}

// SIGTERM, SIGINT and SIGHUP are taken by sigwait in the main thread: they
// are blocked before any thread starts, so no other thread gets them.
sigset_t controlSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return set;
}

// Stops serving; a listener still busy after a second (a client that does
// not read, a request half sent) does not hold the exit up: the process
// leaves and the kernel detaches the probes with its descriptors.
void shutDown(agent::Agent& agent, agent::HttpServer& server, std::thread& windows)
{
    agent.stop();
    windows.join();
    auto stopped = std::async(std::launch::async, [&server] { server.stop(); });
    if (stopped.wait_for(std::chrono::milliseconds(1200)) != std::future_status::ready) {
        std::fprintf(stderr, "lockscope agent: stopped (connections still open were dropped)\n");
        std::fflush(nullptr);
        _exit(0);
    }
    std::fprintf(stderr, "lockscope agent: stopped\n");
}

void runAgent(const AgentArgs& a, Result& result)
{
    const sigset_t signals = controlSignals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    // glibc gives each new thread that allocates its own arena (up to 8 per
    // core); the HTTP pool's threads would each keep one, and the RSS would
    // grow with every pool thread a request happens to reach.
    mallopt(M_ARENA_MAX, 2);
    agent::ServerOptions so;
    so.listen = a.listen;
    so.web_config = a.web_config;
    so.max_profile_requests = a.max_profile_requests;
    try {
        agent::parseListen(a.listen); // a bad address or web config fails before any probe attaches
        if (!a.web_config.empty())
            agent::loadWebConfig(a.web_config);
        auto recording = std::make_unique<record::LiveRecording>(recordOptions(a), stderr);
        agent::AgentOptions ao;
        ao.window_s = a.window;
        ao.metrics_top = a.metrics_top;
        agent::Agent agent(std::move(recording), ao);
        agent::HttpServer server(agent, so);
        server.start();
        const bool tls = !a.web_config.empty() && agent::loadWebConfig(a.web_config).tls();
        std::fprintf(stderr, "lockscope agent: serving %s://%s:%d/ (window %g s)\n", tls ? "https" : "http",
                     agent::parseListen(a.listen).host.c_str(), server.port(), a.window);
        std::fflush(stderr);
        std::thread windows([&agent] { agent.runWindows(); });
        for (;;) {
            int sig = 0;
            sigwait(&signals, &sig);
            if (sig != SIGHUP)
                break;
            const std::string problem = server.reload();
            std::fprintf(stderr, "lockscope agent: %s\n",
                         problem.empty() ? "web config re-read" : problem.c_str());
        }
        shutDown(agent, server, windows);
    } catch (const record::RecordError& e) {
        std::fprintf(stderr, "lockscope agent: %s\n", e.what());
        result.exit_code = 1;
    } catch (const agent::WebConfigError& e) {
        std::fprintf(stderr, "lockscope agent: --web-config %s\n", e.what());
        result.exit_code = 1;
    } catch (const agent::ServerError& e) {
        std::fprintf(stderr, "lockscope agent: %s\n", e.what());
        result.exit_code = 1;
    }
}

} // namespace

void addAgentCommand(CLI::App& app, Result& result)
{
    auto args = std::make_shared<AgentArgs>();
    auto* cmd = app.add_subcommand("agent", "Record kernel lock contention without end and serve it over HTTP "
                                            "(Prometheus metrics, pprof, captures)");
    cmd->footer("Examples:\n"
                "  sudo lockscope agent                          # http://127.0.0.1:9755/metrics\n"
                "  sudo lockscope agent --listen :9755 --web-config /etc/lockscope/web.yml\n"
                "  curl -s 'http://127.0.0.1:9755/capture?seconds=10' > x.json && lockscope report x.json\n"
                "See docs/agent.md.");
    cmd->add_option("--listen", args->listen,
                    "HOST:PORT to serve on (default 127.0.0.1:9755, this machine only; :9755 for every address)");
    cmd->add_option("--web-config", args->web_config,
                    "TLS and basic authentication, in the Prometheus exporters' web config format (re-read on SIGHUP)");
    cmd->add_option("--window", args->window, "seconds between read-outs of the in-kernel aggregates (default 10)")
        ->check(within(0.1, 3600.0));
    cmd->add_option("--metrics-top", args->metrics_top,
                    "locks with their own /metrics series, by wait time; the rest add up in lock=\"other\" (default 50)")
        ->check(within(size_t(1), size_t(10000)));
    cmd->add_option("--max-profile-requests", args->max_profile_requests,
                    "profile and capture requests running at once; more get 503 (default 4)")
        ->check(within(1, 64));
    cmd->add_option("--cgroup", args->cgroup, "only tasks in this cgroup v2 or below it (as record --cgroup)");
    cmd->add_flag("--per-cgroup", args->per_cgroup, "keep locks apart per cgroup v2 of the waiting task");
    cmd->add_flag("--lock-names,!--no-lock-names", args->lock_names,
                  "name each lock beside its key where the kernel lets us know (as record; on unless --no-lock-names)");
    cmd->add_flag("--lock-owner", args->lock_owner,
                  "name the owner task (and its stack) of contended mutexes and writer-owned rwsems (as record; "
                  "served at /debug/pprof/lock_owners)");
    cmd->add_option("--stack-depth", args->stack_depth, "frames kept after the lock internals (as record)")
        ->check(within(0u, 127u));
    cmd->add_option("--stack-budget", args->stack_budget, "stack walks per second per CPU (as record; default 1000)")
        ->check(within(0u, 100000000u));
    cmd->add_option("--timing-budget", args->timing_budget, "timed waits per second per CPU (as record; default 20000)")
        ->check(within(0u, 100000000u));
    cmd->add_option("--wait-rate-cap", args->wait_rate_cap,
                    "contention reports (contention_begin, filtered out or not) per second per CPU above which "
                    "the wait probe attaches for only part of the time and scales its figures up (estimates); "
                    "0: attached all the time (default 15000)")
        ->check(within(0u, 100000000u));
    cmd->add_flag("--no-cpu", args->no_cpu, "do not sample on-CPU stacks");
    cmd->add_option("--freq", args->freq, "CPU sampling frequency in Hz per CPU")
        ->check(within(1u, 100000u));
    cmd->add_option("--wait-backend", args->wait_backend, backendHelp("wait", probes::HookFamily::Wait));
    // As record's: --hold serves lockscope_lock_hold_* and /debug/pprof/lock_hold,
    // --syscalls and --functions lockscope_syscall_* and lockscope_function_*.
    const OptInOptions optin = addOptInOptions(*cmd, args->optin);
    cmd->callback([args, &result, optin] {
        foldSyscallAskers(optin, args->optin);
        runAgent(*args, result);
    });
}

} // namespace lockscope::cli
