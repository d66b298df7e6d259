#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The agent as a network-facing, privileged process, checked with curl:
GET only (405), bounded ?seconds (400), bounded concurrent profiles (503),
clients that disconnect or send garbage never wedge it, basic auth with
bcrypt hashes (401), TLS (plain HTTP to the TLS port fails; a client CA
is enforced), a bad web config stops start-up with one line, SIGHUP
re-reads it, SIGTERM exits in < 2 s with requests in flight.

usage: agent_security_test.py LOCKSCOPE"""
import crypt
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_harness import Agent, bpf_preconditions, fail  # noqa: E402

lockscope = sys.argv[1]  # argv[2], the workload, is not needed here
bpf_preconditions()
tmp = tempfile.mkdtemp(prefix="agent-sec-")


def curl(*args, timeout=60):
    """(HTTP status or 0, curl's exit code, body)"""
    r = subprocess.run(["curl", "-sS", "-o", f"{tmp}/body", "-w", "%{http_code}", "--max-time", "30", *args],
                       capture_output=True, text=True, timeout=timeout)
    body = open(f"{tmp}/body", "rb").read() if os.path.exists(f"{tmp}/body") else b""
    if os.path.exists(f"{tmp}/body"):
        os.remove(f"{tmp}/body")
    return int(r.stdout or 0), r.returncode, body


def expect(what, got, want):
    if got != want:
        fail(f"{what}: got {got}, want {want}")
    print(f"PASS: {what}: {got}")


def bcrypt(password):
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))


def openssl(*args):
    r = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"openssl {' '.join(args)}: {r.stderr}")


def make_certs():
    # A CA, a server certificate for 127.0.0.1 and a client certificate, both signed by it.
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{tmp}/ca.key", "-out", f"{tmp}/ca.crt",
            "-days", "2", "-subj", "/CN=lockscope test CA")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{tmp}/{name}.key", "-out", f"{tmp}/{name}.csr",
                "-subj", f"/CN={name}")
        with open(f"{tmp}/{name}.ext", "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", f"{tmp}/{name}.csr", "-CA", f"{tmp}/ca.crt", "-CAkey", f"{tmp}/ca.key",
                "-CAcreateserial", "-out", f"{tmp}/{name}.crt", "-days", "2", "-extfile", f"{tmp}/{name}.ext")


def start_fails(config_text, expect_in):
    path = f"{tmp}/bad.yml"
    with open(path, "w") as f:
        f.write(config_text)
    r = subprocess.run([lockscope, "agent", "--listen", "127.0.0.1:0", "--web-config", path],
                       capture_output=True, text=True, timeout=30)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 1 or len(lines) != 1 or expect_in not in lines[0]:
        fail(f"a web config {config_text!r} should stop start-up with one line naming {expect_in!r}; "
             f"exit {r.returncode}, stderr:\n{r.stderr}")
    print(f"PASS: bad web config: {lines[0]}")


# Plain HTTP: methods, parameters, limits, rude clients.
agent = Agent(lockscope, "--window", "1", "--max-profile-requests", "2")
base = agent.url("")
try:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        expect(f"{method} /metrics", curl("-X", method, base + "/metrics")[0], 405)
    for bad in ("301", "0", "-1", "abc", "1e9", "nan", ""):
        expect(f"/debug/pprof/lock_wait?seconds={bad}", curl(base + f"/debug/pprof/lock_wait?seconds={bad}")[0], 400)
    expect("/capture?seconds=400", curl(base + "/capture?seconds=400")[0], 400)
    for bad in ("gzip", "ZSTD", "zstd%00", "1"):
        expect(f"/capture?compress={bad}", curl(base + f"/capture?seconds=1&compress={bad}")[0], 400)
    expect("/nowhere", curl(base + "/nowhere")[0], 404)
    expect("/debug/pprof/lock_owners without --lock-owner", curl(base + "/debug/pprof/lock_owners")[0], 404)
    expect("/healthz", curl(base + "/healthz")[0], 200)
    expect("/", curl(base + "/")[0], 200)

    # Two profiles running: the third gets 503 at once, /metrics still answers.
    running = [subprocess.Popen(["curl", "-s", "-o", "/dev/null", base + "/debug/pprof/lock_wait?seconds=4"])
               for _ in range(2)]
    time.sleep(1)
    t0 = time.time()
    expect("a third concurrent profile request", curl(base + "/debug/pprof/lock_wait?seconds=1")[0], 503)
    expect("/metrics while two profiles run", curl(base + "/metrics")[0], 200)
    if time.time() - t0 > 5:
        fail("the 503 and /metrics took more than 5 s while profiles ran")
    for p in running:
        p.wait(timeout=30)

    # Clients that go away mid-request, send garbage, or open and say nothing.
    quitter = subprocess.Popen(["curl", "-s", "-o", "/dev/null", base + "/capture?seconds=2"])
    time.sleep(0.5)
    quitter.kill()
    quitter.wait()
    for junk in (b"\x00\xff garbage\r\n\r\n", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                 b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"):
        with socket.create_connection(("127.0.0.1", agent.port), timeout=5) as s:
            try:
                s.sendall(junk)
                s.recv(1000)
            except OSError:
                pass
    idle = [socket.create_connection(("127.0.0.1", agent.port)) for _ in range(4)]
    slow = subprocess.Popen(["curl", "-s", "-o", "/dev/null", "--limit-rate", "1", base + "/capture"])
    expect("/healthz after rude clients", curl(base + "/healthz")[0], 200)
    status, _, body = curl(base + "/metrics")
    expect("/metrics after rude clients", status, 200)
    if b"lockscope_agent_windows_total" not in body:
        fail("/metrics after rude clients lacks the agent's health")
    # SIGTERM with a profile request in flight, idle connections and a slow reader.
    inflight = subprocess.Popen(["curl", "-s", "-o", "/dev/null", base + "/debug/pprof/lock_wait?seconds=60"])
    time.sleep(0.5)
    took = agent.stop()
    expect_fast = took < 2
    print(f"agent exited {took:.2f} s after SIGTERM with requests in flight")
    if not expect_fast:
        fail("SIGTERM took 2 s or more")
    for s in idle:
        s.close()
    for p in (inflight, slow):
        p.kill()
        p.wait()
finally:
    agent.stop()

# Web config: errors at start-up.
start_fails("basic_auth_users: [\n", "not YAML")
start_fails("basic_auth: {}\n", "unknown field")
start_fails("basic_auth_users:\n  alice: plaintext\n", "not a bcrypt hash")
start_fails("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n", "cannot read")
r = subprocess.run([lockscope, "agent", "--web-config", f"{tmp}/missing.yml"], capture_output=True, text=True)
if r.returncode != 1 or len(r.stderr.strip().splitlines()) != 1:
    fail(f"a missing web config: exit {r.returncode}, {r.stderr}")
print("PASS: missing web config:", r.stderr.strip())

# Basic auth, then SIGHUP with a new password.
config = f"{tmp}/web.yml"
with open(config, "w") as f:
    f.write(f"basic_auth_users:\n  alice: {bcrypt('secret')}\n")
agent = Agent(lockscope, "--window", "1", "--web-config", config)
base = agent.url("")
try:
    expect("no credentials", curl(base + "/metrics")[0], 401)
    expect("a wrong password", curl("-u", "alice:wrong", base + "/metrics")[0], 401)
    expect("an unknown user", curl("-u", "bob:secret", base + "/metrics")[0], 401)
    expect("the right password", curl("-u", "alice:secret", base + "/metrics")[0], 200)
    expect("POST with the right password", curl("-u", "alice:secret", "-X", "POST", base + "/metrics")[0], 405)
    with open(config, "w") as f:
        f.write(f"basic_auth_users:\n  alice: {bcrypt('newer')}\n")
    agent.proc.send_signal(1)  # SIGHUP
    time.sleep(1)
    expect("the old password after SIGHUP", curl("-u", "alice:secret", base + "/metrics")[0], 401)
    expect("the new password after SIGHUP", curl("-u", "alice:newer", base + "/metrics")[0], 200)
    with open(config, "w") as f:
        f.write("basic_auth_users: [\n")
    agent.proc.send_signal(1)
    time.sleep(1)
    expect("a broken config on SIGHUP keeps the running one", curl("-u", "alice:newer", base + "/metrics")[0], 200)
    if "running web config is kept" not in agent.text():
        fail("a broken config on SIGHUP was not reported:\n" + agent.text())
finally:
    agent.stop()

# TLS, then TLS with a client CA.
make_certs()
with open(config, "w") as f:
    f.write(f"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
            f"basic_auth_users:\n  alice: {bcrypt('secret')}\n")
agent = Agent(lockscope, "--window", "1", "--web-config", config)
try:
    if agent.scheme != "https":
        fail("the agent with a TLS config does not say https")
    plain = curl(f"http://127.0.0.1:{agent.port}/metrics")
    if plain[0] not in (0, 400) or plain[0] == 200:
        fail(f"plain HTTP to the TLS port answered {plain}")
    print(f"PASS: plain HTTP to the TLS port fails (curl exit {plain[1]}, HTTP {plain[0]})")
    tls = f"https://127.0.0.1:{agent.port}/metrics"
    expect("HTTPS without credentials", curl("--cacert", f"{tmp}/ca.crt", tls)[0], 401)
    expect("HTTPS with the password", curl("--cacert", f"{tmp}/ca.crt", "-u", "alice:secret", tls)[0], 200)
    expect("HTTPS with an unknown CA", curl(tls)[1] != 0, True)
finally:
    agent.stop()

with open(config, "w") as f:
    f.write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
            "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n")
agent = Agent(lockscope, "--window", "1", "--web-config", config)
try:
    tls = f"https://127.0.0.1:{agent.port}/healthz"
    expect("HTTPS without a client certificate fails", curl("--cacert", f"{tmp}/ca.crt", tls)[0], 0)
    expect("HTTPS with the client certificate", curl("--cacert", f"{tmp}/ca.crt", "--cert", f"{tmp}/client.crt",
                                                     "--key", f"{tmp}/client.key", tls)[0], 200)
finally:
    agent.stop()

shutil.rmtree(tmp, ignore_errors=True)
print("PASS")
