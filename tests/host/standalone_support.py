"""A standalone host process (`openwop-reference-host serve`), started the way a user starts it: the
load, shutdown and availability tests that need a real process (signals, /proc, its own event loop)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Standalone:
    url: str
    token_a = "load-key-a"
    token_b = "load-key-b"

    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"

    def status_kb(self, field: str) -> int:
        """A memory figure of the host process from /proc (VmHWM: its peak resident set)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {field} in /proc/{self.proc.pid}/status")


def launch_host(tmp_path: Path):
    """Factory: `openwop-reference-host serve` as a separate process, the way a user starts it."""
    started: list[tuple[subprocess.Popen, object]] = []

    def start(database_url: str, *options: str) -> Standalone:
        port = _free_port()
        exe = shutil.which("openwop-reference-host", path=os.path.dirname(sys.executable))
        keys = [f"--api-key={Standalone.token_a}=tenant-a", f"--api-key={Standalone.token_b}=tenant-b"]
        log_path = tmp_path / f"host-{len(started)}.log"
        log = open(log_path, "wb")  # noqa: SIM115 (closed after the host stops)
        command = [exe, "serve", "--port", str(port), *keys, "--test-seams", "--database-url", database_url]
        proc = subprocess.Popen([*command, *options], stdout=log, stderr=subprocess.STDOUT)
        started.append((proc, log))
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return Standalone(proc, port)
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log_path.read_text()[-3000:] or "the host did not start") from None
                time.sleep(0.1)

    yield start
    for proc, log in started:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
