// SPDX-License-Identifier: GPL-2.0-or-later
// The HTTP side: cpp-httplib parses HTTP and serves TLS (OpenSSL); this file
// holds the routes, the checks in front of them and the listener's life.
#include "lockscope/agent/http_server.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>

#include <httplib.h> // with CPPHTTPLIB_OPENSSL_SUPPORT, from its pkg-config flags

#include "lockscope/agent/web_config.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"

namespace lockscope::agent {

namespace {

using httplib::Request;
using httplib::Response;

// Threads serving connections: profile requests block theirs for their
// interval, so there are always more than max_profile_requests.
constexpr size_t kServerThreads = 16;

std::string base64Decode(const std::string& in)
{
    static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t bits = 0;
    int count = 0;
    for (char c : in) {
        if (c == '=')
            break;
        const size_t v = kAlphabet.find(c);
        if (v == std::string::npos)
            return {};
        bits = (bits << 6) | uint32_t(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out += char((bits >> count) & 0xff);
        }
    }
    return out;
}

void text(Response& res, int status, const std::string& body)
{
    res.status = status;
    res.set_content(body + "\n", "text/plain; charset=utf-8");
}

// ?seconds=N: nullopt when absent; false (with the 400 set) when bad.
struct SecondsParam {
    bool ok = true;
    std::optional<double> seconds;
};

SecondsParam secondsParam(const Request& req, Response& res, int maxSeconds)
{
    if (!req.has_param("seconds"))
        return {};
    const std::string v = req.get_param_value("seconds");
    char* end = nullptr;
    const double s = v.empty() ? std::nan("") : std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(s) || s <= 0 || s > maxSeconds) {
        text(res, 400, "bad seconds '" + v + "': give a number of seconds in (0, " + std::to_string(maxSeconds) + "]");
        return {false, {}};
    }
    return {true, s};
}

const char* kIndex = R"(<!DOCTYPE html>
<html><head><title>lockscope agent</title></head><body>
<h1>lockscope agent</h1>
<ul>
<li><a href="/metrics">/metrics</a>: Prometheus exposition (per-lock counters, wait histograms, the agent's health)</li>
<li><a href="/debug/pprof/lock_wait">/debug/pprof/lock_wait</a>: pprof of the waits since start;
 <code>?seconds=N</code>: of the next N seconds (Go mutex-profile sample types contentions/count, delay/nanoseconds)</li>
<li>/debug/pprof/lock_hold: the same weighted by hold time, when holds are recorded</li>
<li>/debug/pprof/lock_owners: the owners' side: the waits charged to the owner task's stack when they began
 (<code>--lock-owner</code>, labelled owner_comm and owner_tid) or to the stack holding the spinlock
 (<code>--holder-stacks</code>), as <code>lockscope export --format pprof-holders</code>; <code>?seconds=N</code> as
 above</li>
<li>/capture?seconds=N: a lockscope capture of the next N seconds (<code>lockscope report</code> reads it);
 without seconds, everything since start; <code>&amp;compress=zstd</code>: as one zstd frame (save it as
 *.lockscope.json.zst)</li>
<li><a href="/healthz">/healthz</a></li>
</ul></body></html>
)";

} // namespace

ListenAddress parseListen(const std::string& text)
{
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        throw ServerError("--listen '" + text + "': expected HOST:PORT (127.0.0.1:9755, :9755, [::1]:9755)");
    ListenAddress a;
    a.host = text.substr(0, colon);
    if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
        a.host = a.host.substr(1, a.host.size() - 2);
    if (a.host.empty())
        a.host = "0.0.0.0";
    const std::string port = text.substr(colon + 1);
    char* end = nullptr;
    const long p = port.empty() ? -1 : std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 0 || p > 65535)
        throw ServerError("--listen '" + text + "': bad port '" + port + "'");
    a.port = int(p);
    return a;
}

struct HttpServer::Impl {
    Impl(Agent& a, ServerOptions o) : agent(a), opt(std::move(o)), addr(parseListen(opt.listen)) {}

    Agent& agent;
    ServerOptions opt;
    ListenAddress addr;
    std::mutex mu; // config, server, thread
    WebConfig config;
    std::unique_ptr<httplib::Server> server;
    std::thread thread;
    // Listeners a reload replaced: stopped, their threads finishing the
    // requests they had (a profile request may run minutes).
    std::vector<std::pair<std::unique_ptr<httplib::Server>, std::thread>> retired;
    int boundPort = 0;
    std::atomic<int> profilesRunning{0};

    std::unique_ptr<httplib::Server> makeServer(const WebConfig& c);
    void bind(const WebConfig& c);
    void routes(httplib::Server& s);
    bool authorized(const Request& req);
    void profile(const Request& req, Response& res, const std::function<void(const Capture&, Response&)>& render);
};

std::unique_ptr<httplib::Server> HttpServer::Impl::makeServer(const WebConfig& c)
{
    std::unique_ptr<httplib::Server> s;
    if (c.tls()) {
        auto ssl = std::make_unique<httplib::SSLServer>(c.cert_file.c_str(), c.key_file.c_str(),
                                                        c.client_ca_file.empty() ? nullptr : c.client_ca_file.c_str());
        if (!ssl->is_valid())
            throw ServerError("web config: TLS setup failed: cert_file " + c.cert_file + " and key_file " + c.key_file +
                              " must be a PEM certificate and its private key");
        s = std::move(ssl);
    } else {
        s = std::make_unique<httplib::Server>();
    }
    s->new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
    s->set_read_timeout(5, 0);
    s->set_write_timeout(10, 0);
    s->set_keep_alive_timeout(5);
    s->set_keep_alive_max_count(100);
    s->set_payload_max_length(64 * 1024);
    routes(*s);
    return s;
}

void HttpServer::Impl::bind(const WebConfig& c)
{
    auto s = makeServer(c);
    const int port = addr.port == 0 && boundPort != 0 ? boundPort : addr.port;
    const int got = port == 0 ? s->bind_to_any_port(addr.host) : (s->bind_to_port(addr.host, port) ? port : -1);
    if (got < 0)
        throw ServerError("cannot listen on " + opt.listen + ": " + std::strerror(errno));
    boundPort = got;
    server = std::move(s);
}

bool HttpServer::Impl::authorized(const Request& req)
{
    std::map<std::string, std::string> users;
    {
        std::lock_guard lock(mu);
        users = config.users;
    }
    if (users.empty())
        return true;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Basic ", 0) != 0)
        return false;
    const std::string pair = base64Decode(auth.substr(6));
    const size_t colon = pair.find(':');
    if (colon == std::string::npos)
        return false;
    const auto it = users.find(pair.substr(0, colon));
    return it != users.end() && bcryptMatches(pair.substr(colon + 1), it->second);
}

void HttpServer::Impl::profile(const Request& req, Response& res,
                               const std::function<void(const Capture&, Response&)>& render)
{
    const SecondsParam p = secondsParam(req, res, opt.max_seconds);
    if (!p.ok)
        return;
    if (!p.seconds) {
        render(agent.cumulative(), res);
        return;
    }
    if (profilesRunning.fetch_add(1) >= opt.max_profile_requests) {
        profilesRunning.fetch_sub(1);
        agent.countRejected();
        res.set_header("Retry-After", "10");
        text(res, 503, "too many profile requests running (at most " + std::to_string(opt.max_profile_requests) + ")");
        return;
    }
    std::optional<Capture> delta;
    try {
        delta = agent.delta(std::chrono::milliseconds(std::llround(*p.seconds * 1000)));
    } catch (...) {
        profilesRunning.fetch_sub(1);
        throw;
    }
    profilesRunning.fetch_sub(1);
    if (!delta) {
        text(res, 503, "the agent is stopping");
        return;
    }
    render(*delta, res);
}

namespace {

bool attached(const Agent& agent, std::string_view probe)
{
    const auto& probes = agent.probes();
    return std::any_of(probes.begin(), probes.end(),
                       [&](const ProbeStatus& p) { return p.name == probe && p.attached; });
}

// format: an exporter's name ("pprof", "pprof-holders"): the agent serves
// what `lockscope export` writes.
void pprofBody(const Capture& c, Response& res, const char* format, reports::Weight weight, const char* file)
{
    reports::ExportOptions eo;
    eo.weight = weight;
    res.set_header("Content-Disposition", std::string("attachment; filename=\"") + file + "\"");
    res.set_content(reports::findExporter(format)->write(c, eo), "application/octet-stream");
}

// What record writes: the compact layout, one zstd frame when asked; built
// as text, never as a DOM of the window.
void captureBody(const Capture& c, Response& res, bool zstd)
{
    std::string body;
    writeCapture(c, WriteOptions { .layout = CaptureLayout::Compact }, zstd,
                 [&](std::string_view piece) { body += piece; });
    res.set_header("Content-Disposition", zstd ? "attachment; filename=\"agent.lockscope.json.zst\""
                                               : "attachment; filename=\"agent.lockscope.json\"");
    res.body = std::move(body); // set_content would copy it
    res.set_header("Content-Type", zstd ? "application/zstd" : "application/json");
}

} // namespace

void HttpServer::Impl::routes(httplib::Server& s)
{
    s.set_pre_routing_handler([this](const Request& req, Response& res) {
        if (req.method != "GET" && req.method != "HEAD") {
            res.set_header("Allow", "GET, HEAD");
            text(res, 405, "method " + req.method + " not allowed: the agent is read-only (GET)");
            return httplib::Server::HandlerResponse::Handled;
        }
        if (!authorized(req)) {
            res.set_header("WWW-Authenticate", "Basic realm=\"lockscope\", charset=\"UTF-8\"");
            text(res, 401, "unauthorized");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    s.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what += std::string(": ") + e.what();
        } catch (...) {
        }
        text(res, 500, what);
    });
    s.Get("/", [](const Request&, Response& res) { res.set_content(kIndex, "text/html; charset=utf-8"); });
    s.Get("/healthz", [this](const Request&, Response& res) {
        text(res, agent.stopped() ? 503 : 200, agent.stopped() ? "stopping" : "ok");
    });
    s.Get("/metrics", [this](const Request&, Response& res) { res.set_content(agent.metrics(), kMetricsContentType); });
    s.Get("/debug/pprof/lock_wait", [this](const Request& req, Response& res) {
        profile(req, res, [](const Capture& c, Response& r) {
            pprofBody(c, r, "pprof", reports::Weight::Wait, "lock_wait.pb.gz");
        });
    });
    s.Get("/debug/pprof/lock_hold", [this](const Request& req, Response& res) {
        if (!attached(agent, "spin_hold")) {
            text(res, 404, "holds are not recorded: the agent runs without the hold probe");
            return;
        }
        profile(req, res, [](const Capture& c, Response& r) {
            pprofBody(c, r, "pprof", reports::Weight::Hold, "lock_hold.pb.gz");
        });
    });
    s.Get("/debug/pprof/lock_owners", [this](const Request& req, Response& res) {
        if (!attached(agent, "lock_owner") && !attached(agent, "holder_stacks")) {
            text(res, 404,
                 "lock owners and holders are not recorded: run the agent with --lock-owner or --holder-stacks");
            return;
        }
        profile(req, res, [](const Capture& c, Response& r) {
            pprofBody(c, r, "pprof-holders", reports::Weight::Wait, "lock_owners.pb.gz");
        });
    });
    s.Get("/capture", [this](const Request& req, Response& res) {
        const std::string compress = req.has_param("compress") ? req.get_param_value("compress") : "";
        if (!compress.empty() && compress != "zstd") {
            text(res, 400, "bad compress '" + compress + "': the capture is compressed with zstd (compress=zstd) or not");
            return;
        }
        profile(req, res, [zstd = !compress.empty()](const Capture& c, Response& r) { captureBody(c, r, zstd); });
    });
}

HttpServer::HttpServer(Agent& agent, ServerOptions options) : impl_(std::make_unique<Impl>(agent, std::move(options)))
{
    if (!impl_->opt.web_config.empty())
        impl_->config = loadWebConfig(impl_->opt.web_config);
    impl_->bind(impl_->config);
}

HttpServer::~HttpServer()
{
    stop();
}

void HttpServer::start()
{
    std::lock_guard lock(impl_->mu);
    httplib::Server* s = impl_->server.get();
    impl_->thread = std::thread([s] { s->listen_after_bind(); });
}

std::string HttpServer::reload()
{
    if (impl_->opt.web_config.empty())
        return "";
    WebConfig fresh;
    try {
        fresh = loadWebConfig(impl_->opt.web_config);
    } catch (const WebConfigError& e) {
        return std::string(e.what()) + " (the running web config is kept)";
    }
    std::unique_lock lock(impl_->mu);
    const WebConfig& old = impl_->config;
    if (!fresh.tls() && !old.tls()) { // plain HTTP stays: only the users change
        impl_->config = fresh;
        return "";
    }
    // Certificates may have changed on disk under the same names: a TLS
    // setup is always loaded anew, on a new listener at the same address.
    try {
        auto probe = impl_->makeServer(fresh); // a bad certificate keeps the running listener
    } catch (const ServerError& e) {
        return std::string(e.what()) + " (the running web config is kept)";
    }
    impl_->server->stop();
    impl_->retired.emplace_back(std::move(impl_->server), std::move(impl_->thread));
    impl_->config = fresh;
    try {
        impl_->bind(fresh);
    } catch (const ServerError& e) {
        return e.what();
    }
    httplib::Server* s = impl_->server.get();
    impl_->thread = std::thread([s] { s->listen_after_bind(); });
    return "";
}

void HttpServer::stop()
{
    std::unique_lock lock(impl_->mu);
    if (impl_->server)
        impl_->server->stop();
    std::vector<std::thread> threads;
    if (impl_->thread.joinable())
        threads.push_back(std::move(impl_->thread));
    for (auto& [server, thread] : impl_->retired)
        if (thread.joinable())
            threads.push_back(std::move(thread));
    lock.unlock();
    for (auto& t : threads)
        t.join();
}

int HttpServer::port() const
{
    return impl_->boundPort;
}

} // namespace lockscope::agent
