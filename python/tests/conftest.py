"""Fixtures: one standalone daemon per test session, a connected Store, and
unique keys per test (the tests share the daemon)."""

from __future__ import annotations

import uuid

import pytest

import mooncake_tier as mt
from mooncake_tier.standalone import StandaloneDaemon


@pytest.fixture(scope="session")
def daemon():
    # 128 MiB of DRAM keeps the "larger than any segment" case cheap.
    with StandaloneDaemon(dram="128MiB", ssd_capacity="256MiB") as d:
        yield d


@pytest.fixture
def store(daemon):
    with mt.Store(daemon.master_address) as s:
        yield s


@pytest.fixture
def key(request):
    """key("x") -> a key (or group id) no other test uses."""
    prefix = f"{request.node.name}/{uuid.uuid4().hex[:8]}"
    return lambda name="k": f"{prefix}/{name}"
