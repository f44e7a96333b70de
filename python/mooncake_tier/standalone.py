"""Start a throwaway ``mooncake-tierd standalone`` for tests, examples and
the benchmark.

::

    with StandaloneDaemon() as daemon:
        with mooncake_tier.Store(daemon.master_address) as store:
            ...

The daemon listens on a free loopback port (``--listen 127.0.0.1:0``; also
its admin server when the binary has one), keeps its SSD tier in a
temporary directory, and is stopped (SIGTERM, then SIGKILL) on exit.
Readiness is the daemon's ``--ready-file``: nothing sleeps a fixed time.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Sequence

__all__ = ["StandaloneDaemon", "find_daemon"]


def find_daemon(explicit: str | None = None) -> str:
    """Path of mooncake-tierd: ``explicit``, else $MOONCAKE_TIERD, else the
    one built beside this package (build/daemon/), else PATH."""
    candidates = [explicit, os.environ.get("MOONCAKE_TIERD")]
    here = Path(__file__).resolve().parent
    candidates.append(str(here.parent.parent / "daemon" / "mooncake-tierd"))
    candidates.append(shutil.which("mooncake-tierd"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError(
        "mooncake-tierd not found: pass its path, set MOONCAKE_TIERD, or "
        "build it (cmake --build build --target mooncake-tierd)")


class StandaloneDaemon:
    """A standalone daemon (master + one node) on free loopback ports."""

    def __init__(self, binary: str | None = None, dram: str = "128MiB",
                 ssd_capacity: str = "256MiB",
                 extra_args: Sequence[str] = (),
                 ready_timeout: float = 30.0) -> None:
        self.binary = find_daemon(binary)
        self.dram = dram
        self.ssd_capacity = ssd_capacity
        self.extra_args = list(extra_args)
        self.ready_timeout = ready_timeout
        self.master_address = ""
        self.admin_address: str | None = None
        self._dir: tempfile.TemporaryDirectory | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    def _has_flag(self, flag: str) -> bool:
        out = subprocess.run([self.binary, "standalone", "--help"],
                             capture_output=True, text=True, timeout=30)
        return flag in out.stdout

    def start(self) -> "StandaloneDaemon":
        self._dir = tempfile.TemporaryDirectory(prefix="mooncake-tier-py-")
        root = Path(self._dir.name)
        ready = root / "ready"
        args = [self.binary, "standalone", "--listen", "127.0.0.1:0",
                "--ready-file", str(ready), "--ssd-dir", str(root / "ssd"),
                "--ssd-capacity", self.ssd_capacity, "--dram", self.dram,
                "--log-level", "warn"]
        # Another daemon's default admin port must never collide with ours.
        if self._has_flag("--admin-listen"):
            args += ["--admin-listen", "127.0.0.1:0"]
        args += self.extra_args
        self._log = open(root / "daemon.log", "w+b")
        self._proc = subprocess.Popen(args, stdout=self._log,
                                      stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.ready_timeout
        while not ready.exists():
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"mooncake-tierd exited with {self._proc.returncode} "
                    f"before it was ready:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"mooncake-tierd not ready within {self.ready_timeout} s")
            time.sleep(0.02)
        fields = dict(line.split("=", 1) for line in
                      ready.read_text().splitlines() if "=" in line)
        self.master_address = fields["master_address"]
        self.admin_address = fields.get("admin_address")
        return self

    def send_signal(self, sig: int) -> None:
        """Sends `sig` to the daemon (SIGHUP reloads its token files)."""
        if self._proc is None:
            raise RuntimeError("the daemon is not running")
        self._proc.send_signal(sig)

    def log_tail(self, limit: int = 4000) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-limit:]

    def stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGTERM)
                try:
                    self._proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> "StandaloneDaemon":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
