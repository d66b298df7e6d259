// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <crypt.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "lockscope/agent/web_config.h"

namespace lockscope::agent {
namespace {

// This process's own folder, removed at exit: two runs at once do not share files, and none stay behind.
const std::string& configDir()
{
    struct Dir {
        std::string path = ::testing::TempDir() + "/lockscope-web-config-" + std::to_string(::getpid());
        Dir() { std::filesystem::create_directories(path); }
        ~Dir()
        {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    };
    static const Dir dir;
    return dir.path;
}

std::string writeConfig(const std::string& name, const std::string& text)
{
    const std::string path = configDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

// bcrypt of "secret" in the $2y$ variant htpasswd -B writes (made with crypt(3)).
constexpr const char* kAliceSecret = "$2y$05$AeaZKkt8hY6zdLuNAqHsfunyGHrIuT6sI.RDtf54cudGLdVfSh/qS";

std::string errorOf(const std::string& path)
{
    try {
        loadWebConfig(path);
    } catch (const WebConfigError& e) {
        return e.what();
    }
    return "";
}

TEST(WebConfig, ReadsUsersAndTlsRelativeToItsFolder)
{
    const std::string cert = writeConfig("c.crt", "x"), key = writeConfig("c.key", "x");
    const WebConfig c = loadWebConfig(writeConfig("ok.yml", std::string("tls_server_config:\n  cert_file: c.crt\n"
                                                                         "  key_file: c.key\nbasic_auth_users:\n"
                                                                         "  alice: ") + kAliceSecret + "\n"));
    EXPECT_TRUE(std::filesystem::equivalent(c.cert_file, cert)) << c.cert_file;
    EXPECT_TRUE(std::filesystem::equivalent(c.key_file, key)) << c.key_file;
    EXPECT_TRUE(c.tls());
    ASSERT_EQ(c.users.count("alice"), 1u);
}

TEST(WebConfig, BadOnesAreOneLineNamingTheProblem)
{
    EXPECT_NE(errorOf(configDir() + "/missing.yml").find("cannot read"), std::string::npos);
    EXPECT_NE(errorOf(writeConfig("bad.yml", "tls_server_config: [\n")).find("not YAML"), std::string::npos);
    EXPECT_NE(errorOf(writeConfig("unknown.yml", "basic_auth: {}\n")).find("unknown field 'basic_auth'"),
              std::string::npos);
    EXPECT_NE(errorOf(writeConfig("plain.yml", "basic_auth_users:\n  bob: secret\n")).find("not a bcrypt hash"),
              std::string::npos);
    EXPECT_NE(errorOf(writeConfig("half.yml", "tls_server_config:\n  cert_file: c.crt\n")).find("key_file"),
              std::string::npos);
    EXPECT_NE(errorOf(writeConfig("ca.yml", "tls_server_config:\n  cert_file: c.crt\n  key_file: c.key\n"
                                            "  client_auth_type: RequireAndVerifyClientCert\n"))
                  .find("needs client_ca_file"),
              std::string::npos);
    for (const char* name : {"missing.yml", "bad.yml", "unknown.yml", "plain.yml"})
        EXPECT_EQ(errorOf(writeConfig(std::string("x") + name, "basic_auth: {}\n")).find('\n'), std::string::npos);
}

TEST(WebConfig, BcryptChecksWithLibcrypt)
{
    EXPECT_TRUE(bcryptMatches("secret", kAliceSecret));
    EXPECT_FALSE(bcryptMatches("Secret", kAliceSecret));
    EXPECT_FALSE(bcryptMatches("", kAliceSecret));
    // A $2b$ hash made here, by libcrypt itself.
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    ASSERT_NE(crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt), nullptr);
    crypt_data data{};
    const std::string hash = crypt_r("pw", salt, &data);
    EXPECT_TRUE(bcryptMatches("pw", hash));
    EXPECT_FALSE(bcryptMatches("pw2", hash));
}

} // namespace
} // namespace lockscope::agent
