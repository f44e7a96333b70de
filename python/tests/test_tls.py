"""TLS against a real standalone daemon started with certificates from
scripts/make-test-ca.sh and client certificates required: only a client
with a certificate from the CA gets in, its certificate's role decides what
it may call, files come from arguments or the environment, bad files are
refused with a message naming them, and SIGHUP with a bad certificate keeps
the daemon serving the one it has."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import mooncake_tier as mt
from mooncake_tier.standalone import StandaloneDaemon

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make-test-ca.sh"
TLS_VARIABLES = ("MOONCAKE_TIER_TLS_CA", "MOONCAKE_TIER_TLS_CERT",
                 "MOONCAKE_TIER_TLS_KEY", "MOONCAKE_TIER_TLS_SERVER_NAME")


@pytest.fixture
def pki(tmp_path, monkeypatch):
    for name in TLS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    subprocess.run(["bash", str(SCRIPT), str(tmp_path / "pki")], check=True,
                   capture_output=True, timeout=60)
    return tmp_path / "pki"


def served(pki: Path, tmp_path: Path) -> list[str]:
    """The master's files, copied so that a test may spoil them."""
    for name in ("master.pem", "master.key", "ca.pem"):
        shutil.copy(pki / name, tmp_path / name)
    return ["--tls-cert", str(tmp_path / "master.pem"),
            "--tls-key", str(tmp_path / "master.key"),
            "--tls-ca", str(tmp_path / "ca.pem")]


def client(pki: Path, role: str = "client") -> dict[str, str]:
    return {"tls_ca": str(pki / "ca.pem"), "tls_cert": str(pki / f"{role}.pem"),
            "tls_key": str(pki / f"{role}.key")}


def test_a_certificate_from_the_ca_gets_in_and_its_role_decides(pki, tmp_path):
    # Ready means the standalone's node registered over TLS, with the
    # master's own certificate.
    with StandaloneDaemon(extra_args=served(pki, tmp_path)) as d:
        with mt.Store(d.master_address, **client(pki)) as s:
            s.put("tls/k", b"v" * 1000)
            assert s.get("tls/k") == b"v" * 1000
        with mt.Store(d.master_address, **client(pki, "admin")) as s:
            assert s.exists("tls/k").exists
        # A node's certificate is not a client's: refused before it is
        # shown (the master would refuse its client calls too).
        with pytest.raises(mt.InvalidArgumentError, match="mooncake-tier/node"):
            mt.Store(d.master_address, **client(pki, "node"))
        # Plaintext, or TLS without a certificate: no connection at all.
        with pytest.raises(mt.UnavailableError):
            mt.Store(d.master_address, rpc_timeout=1.0)
        with pytest.raises(mt.UnavailableError):
            mt.Store(d.master_address, rpc_timeout=1.0,
                     tls_ca=str(pki / "ca.pem"))


def test_files_come_from_the_environment_and_bad_ones_are_named(
        pki, tmp_path, monkeypatch):
    with StandaloneDaemon(extra_args=served(pki, tmp_path)) as d:
        for name, value in zip(TLS_VARIABLES[:3], client(pki).values()):
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("MOONCAKE_TIER_TLS_SERVER_NAME", "localhost")
        with mt.Store(d.master_address) as s:
            s.put("tls/env", b"e")
        # A name the master's certificate does not carry.
        with pytest.raises(mt.UnavailableError):
            mt.Store(d.master_address, rpc_timeout=1.0,
                     tls_server_name="elsewhere.example")
        # The key of another certificate: refused before any connection.
        with pytest.raises(mt.InvalidArgumentError, match="client.key"):
            mt.Store(d.master_address, tls_ca=str(pki / "ca.pem"),
                     tls_cert=str(pki / "admin.pem"),
                     tls_key=str(pki / "client.key"))


def test_sighup_with_a_bad_certificate_keeps_serving(pki, tmp_path):
    with StandaloneDaemon(extra_args=served(pki, tmp_path)) as d:
        (tmp_path / "master.pem").write_text("not a certificate\n")
        d.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "not reloaded" not in d.log_tail():
            assert time.monotonic() < deadline, d.log_tail()
            time.sleep(0.1)
        assert "master.pem" in d.log_tail()
        time.sleep(1.5)  # past a refresh of gRPC's view of the files
        with mt.Store(d.master_address, **client(pki)) as s:
            s.put("tls/after", b"x")
            assert s.get("tls/after") == b"x"


def test_the_daemon_refuses_to_start_with_a_bad_certificate(pki, tmp_path):
    args = served(pki, tmp_path)
    shutil.copy(pki / "node.key", tmp_path / "master.key")
    with pytest.raises(RuntimeError, match="does not match"):
        StandaloneDaemon(extra_args=args).start()
