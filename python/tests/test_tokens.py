"""Authenticated calls against a real standalone daemon started with token
files: a client needs the client token (a node's token will not do), the
standalone's own node registers with the node token, and SIGHUP swaps in
new tokens at once while a bad file keeps the old ones."""

from __future__ import annotations

import signal
import time

import pytest

import mooncake_tier as mt
from mooncake_tier.standalone import StandaloneDaemon

NODE = "n" * 40
CLIENT = "c" * 40
FRESH = "f" * 40


def wait_for(check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except mt.UnauthenticatedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def tokens(tmp_path):
    node = tmp_path / "node.tokens"
    client = tmp_path / "client.tokens"
    node.write_text(f"# nodes\n{NODE}\n")
    client.write_text(f"{CLIENT}\n")
    return node, client


def test_calls_need_the_client_token(tokens, monkeypatch):
    node, client = tokens
    args = ["--node-token-file", str(node), "--client-token-file", str(client)]
    # Ready means the standalone's node registered: with the node token.
    with StandaloneDaemon(extra_args=args) as d:
        monkeypatch.delenv("MOONCAKE_TIER_CLIENT_TOKEN_FILE", raising=False)
        with pytest.raises(mt.UnauthenticatedError):
            mt.Store(d.master_address)
        # A node's token reaches the master (GetNode is both roles') but
        # no client call.
        with mt.Store(d.master_address, token=NODE) as s:
            with pytest.raises(mt.UnauthenticatedError):
                s.put("tok/node", b"x")
        with mt.Store(d.master_address, token=CLIENT) as s:
            s.put("tok/k", b"v" * 100)
            assert s.get("tok/k") == b"v" * 100
        # The token file, from the environment.
        monkeypatch.setenv("MOONCAKE_TIER_CLIENT_TOKEN_FILE", str(client))
        with mt.Store(d.master_address) as s:
            assert s.exists("tok/k").exists


def test_sighup_swaps_tokens_and_a_bad_file_keeps_them(tokens):
    node, client = tokens
    args = ["--node-token-file", str(node), "--client-token-file", str(client)]
    with StandaloneDaemon(extra_args=args) as d:
        client.write_text(f"{FRESH}\n")
        d.send_signal(signal.SIGHUP)
        wait_for(lambda: mt.Store(d.master_address, token=FRESH).close())
        with pytest.raises(mt.UnauthenticatedError):
            mt.Store(d.master_address, token=CLIENT)
        # A token too short to keep: the reload fails, FRESH stays.
        client.write_text("short\n")
        d.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        with mt.Store(d.master_address, token=FRESH) as s:
            s.put("tok/after", b"x")
        assert "tokens not reloaded" in d.log_tail()
