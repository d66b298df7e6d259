// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "lockscope/agent/agent.h"

// The agent's HTTP side (cpp-httplib): read-only endpoints, GET only, with
// TLS and basic authentication from --web-config, bounded work per request.
namespace lockscope::agent {

class ServerError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ServerOptions {
    std::string listen = "127.0.0.1:9755"; // HOST:PORT; [v6]:PORT
    std::string web_config;                // "" = plain HTTP, no authentication
    int max_profile_requests = 4;          // running profile/capture requests beyond: 503
    int max_seconds = 300;                 // ?seconds= beyond: 400
};

// A listen address: "127.0.0.1:9755", ":9755" (every address), "[::1]:9755".
struct ListenAddress {
    std::string host;
    int port = 0;
};
ListenAddress parseListen(const std::string& text); // throws ServerError

class HttpServer {
public:
    // Reads the web config and binds; throws ServerError or WebConfigError
    // (one line) when either fails.
    HttpServer(Agent& agent, ServerOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Serves in a thread of its own until stop().
    void start();
    // SIGHUP: reads the web config again. A bad one is reported (returned
    // as one line) and the running one kept; a changed TLS setup restarts
    // the listener on the same address.
    std::string reload();
    void stop();
    int port() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace lockscope::agent
