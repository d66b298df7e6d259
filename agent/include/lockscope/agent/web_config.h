// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <map>
#include <stdexcept>
#include <string>

// --web-config FILE in the format Prometheus exporters read
// (exporter-toolkit's web configuration):
//
//   tls_server_config:
//     cert_file: server.crt          # relative paths: to the file's folder
//     key_file: server.key
//     client_auth_type: RequireAndVerifyClientCert   # optional
//     client_ca_file: ca.crt                          # optional
//   basic_auth_users:
//     alice: $2y$10$...              # bcrypt hash (htpasswd -B)
namespace lockscope::agent {

// One line naming the file and the problem.
class WebConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct WebConfig {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;
    std::string client_auth_type;            // "" = NoClientCert
    std::map<std::string, std::string> users; // name -> bcrypt hash; empty = no authentication
    bool tls() const { return !cert_file.empty(); }
};

// Throws WebConfigError for an unreadable file, bad YAML, an unknown key, a
// TLS section without cert and key, a client CA without a verifying
// client_auth_type (or the reverse), or a hash that is not bcrypt.
WebConfig loadWebConfig(const std::string& path);

// Whether password matches the bcrypt hash (libcrypt's crypt_r).
bool bcryptMatches(const std::string& password, const std::string& hash);

} // namespace lockscope::agent
