"""The master's control lane against a real daemon: a store that uses it
and one that does not see the same answers, and the lane's calls show in
the master's metrics."""

from __future__ import annotations

import urllib.request

import mooncake_tier as mt


def calls(daemon, method: str, code: str = "OK") -> float:
    """mooncake_rpc_requests_total{method, code}."""
    total = 0.0
    with urllib.request.urlopen(f"http://{daemon.admin_address}/metrics",
                                timeout=5) as r:
        for line in r.read().decode().splitlines():
            if (line.startswith("mooncake_rpc_requests_total{")
                    and f'method="{method}"' in line
                    and f'code="{code}"' in line):
                total += float(line.rsplit(" ", 1)[1])
    return total


def test_lookups_answer_the_same_with_and_without_the_lane(daemon, key):
    keys = [key(str(i)) for i in range(3)]
    with mt.Store(daemon.master_address) as lane, \
            mt.Store(daemon.master_address, control_lane=False) as grpc:
        for i, k in enumerate(keys[:2]):
            lane.put(k, bytes([i + 1]) * 4096)
        asked = calls(daemon, "GetControlLane")
        for store in (lane, grpc):
            assert store.exists(keys[0]).size == 4096
            assert not store.exists(keys[2]).exists
            assert tuple(store.probe_prefix(keys)) == (2, 8192)
            assert store.get(keys[1]) == bytes([2]) * 4096
        # Only the store with the lane looked for it, and the daemon offered
        # it (an answer counted OK).
        assert calls(daemon, "GetControlLane") == asked + 1
