// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/web_config.h"

#include <cerrno>
#include <crypt.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace lockscope::agent {

namespace {

// exporter-toolkit's client_auth_type values; the last two check the
// client's certificate against client_ca_file.
const std::set<std::string> kClientAuthTypes = {"NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                                                "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"};

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw WebConfigError(path + ": cannot read: " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void checkKeys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where)
{
    if (!map.IsMap())
        throw WebConfigError(where + " must be a mapping");
    for (const auto& kv : map) {
        const auto key = kv.first.as<std::string>();
        if (!known.count(key))
            throw WebConfigError(where + ": unknown field '" + key + "'");
    }
}

std::string scalar(const YAML::Node& n, const std::string& where)
{
    if (!n.IsScalar())
        throw WebConfigError(where + " must be a string");
    return n.as<std::string>();
}

// Relative paths are relative to the config file's folder (as exporters read them).
std::string pathFrom(const std::string& configPath, const std::string& p)
{
    if (p.empty() || p.front() == '/')
        return p;
    return (std::filesystem::path(configPath).parent_path() / p).string();
}

void readTls(const YAML::Node& tls, const std::string& path, WebConfig& c)
{
    const std::string where = path + ": tls_server_config";
    checkKeys(tls, {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version",
                    "cipher_suites", "prefer_server_cipher_suites", "curve_preferences"},
              where);
    for (const char* ignoredKey : {"min_version", "max_version", "cipher_suites", "prefer_server_cipher_suites",
                                   "curve_preferences"})
        if (tls[ignoredKey])
            throw WebConfigError(where + ": " + ignoredKey + " is not supported (OpenSSL's defaults apply)");
    if (tls["cert_file"])
        c.cert_file = pathFrom(path, scalar(tls["cert_file"], where + ".cert_file"));
    if (tls["key_file"])
        c.key_file = pathFrom(path, scalar(tls["key_file"], where + ".key_file"));
    if (tls["client_ca_file"])
        c.client_ca_file = pathFrom(path, scalar(tls["client_ca_file"], where + ".client_ca_file"));
    if (tls["client_auth_type"])
        c.client_auth_type = scalar(tls["client_auth_type"], where + ".client_auth_type");
    if (c.cert_file.empty() || c.key_file.empty())
        throw WebConfigError(where + ": needs both cert_file and key_file");
    if (!c.client_auth_type.empty() && !kClientAuthTypes.count(c.client_auth_type))
        throw WebConfigError(where + ": unknown client_auth_type '" + c.client_auth_type + "'");
    const bool verifies = c.client_auth_type == "RequireAndVerifyClientCert" ||
                          c.client_auth_type == "VerifyClientCertIfGiven";
    if (verifies && c.client_ca_file.empty())
        throw WebConfigError(where + ": client_auth_type " + c.client_auth_type + " needs client_ca_file");
    if (!verifies && !c.client_ca_file.empty())
        throw WebConfigError(where + ": client_ca_file needs client_auth_type RequireAndVerifyClientCert "
                                     "or VerifyClientCertIfGiven");
    if (c.client_auth_type == "VerifyClientCertIfGiven" || c.client_auth_type == "RequestClientCert" ||
        c.client_auth_type == "RequireAnyClientCert")
        throw WebConfigError(where + ": client_auth_type " + c.client_auth_type +
                             " is not supported: use RequireAndVerifyClientCert or none");
    for (const std::string* f : {&c.cert_file, &c.key_file, &c.client_ca_file})
        if (!f->empty() && !std::ifstream(*f)) // unreadable: one line now, not a failed handshake later
            throw WebConfigError(where + ": cannot read " + *f + ": " + std::strerror(errno));
}

void readUsers(const YAML::Node& users, const std::string& path, WebConfig& c)
{
    const std::string where = path + ": basic_auth_users";
    if (!users.IsMap())
        throw WebConfigError(where + " must be a mapping of user names to bcrypt hashes");
    for (const auto& kv : users) {
        const auto name = kv.first.as<std::string>();
        const std::string hash = scalar(kv.second, where + "." + name);
        if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$')
            throw WebConfigError(where + "." + name + ": not a bcrypt hash ($2y$..., as htpasswd -B writes)");
        c.users[name] = hash;
    }
}

} // namespace

WebConfig loadWebConfig(const std::string& path)
{
    const std::string text = readFile(path);
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw WebConfigError(path + ": not YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
    }
    WebConfig c;
    if (root.IsNull())
        return c;
    try {
        checkKeys(root, {"tls_server_config", "basic_auth_users", "http_server_config"}, path);
        if (root["http_server_config"])
            throw WebConfigError(path + ": http_server_config is not supported");
        if (root["tls_server_config"])
            readTls(root["tls_server_config"], path, c);
        if (root["basic_auth_users"])
            readUsers(root["basic_auth_users"], path, c);
    } catch (const YAML::Exception& e) {
        throw WebConfigError(path + ": " + e.msg);
    }
    return c;
}

bool bcryptMatches(const std::string& password, const std::string& hash)
{
    auto data = std::make_unique<crypt_data>();
    const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
    if (!out || out[0] == '*' || std::strlen(out) != hash.size())
        return false;
    unsigned char diff = 0; // the whole hash compared, whatever differs first
    for (size_t i = 0; i < hash.size(); ++i)
        diff |= static_cast<unsigned char>(out[i] ^ hash[i]);
    return diff == 0;
}

} // namespace lockscope::agent
