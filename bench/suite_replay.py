"""The suite's raw-HTTP floor: its own requests, replayed by a bare httpx client.

The suite against the embedded host costs its HTTP requests plus everything around them (pytest,
the plugin, schema validation, oracles, evidence, the report). To see how close it is to the
requests alone, the bench runs the suite once in this process with a recording transport wrapped
around the harness's own (`conformance.client._DeadlineTransport`), so what is recorded is exactly
what the suite sent; then it boots a fresh embedded host and sends the same requests, in the same
order, with a bare `httpx.Client`. The ratio is the suite's wall time over the replay's.

Both sides are timed as a user meets them, from a shell: the suite is `openwop-memory-conformance
run` in a subprocess (bench/suite_wall_time.py), the floor is `python -m bench.suite_replay --play
FILE` in a subprocess (interpreter start, booting the embedded host, the requests). The host token
never reaches FILE or anything else: a recorded request keeps which credential it carried (tenant A,
tenant B, none, or another string the suite made up), never the value; the replay puts the new
host's own tokens in. Requests the suite makes other than through its client (raw sockets of the
edge checks, the `memory` CLI and MCP subprocesses) are not in the replay, so the floor is, if
anything, low. The replayed host sees the same requests but not always the same state (an id the
first host generated and the suite echoed back may name nothing on the second), which changes
little of the work.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

INVALID_CREDENTIAL = "Bearer not-a-key-of-this-host"


@dataclass(frozen=True)
class Sent:
    """One request as the suite sent it, its credential reduced to a label."""

    method: str
    target: str  # raw path and query
    headers: tuple[tuple[str, str], ...]  # without Authorization
    credential: str  # "a", "b", "none" or "other"
    body: bytes


def _label(authorization: str | None, hosts: list[Any]) -> str:
    if authorization is None:
        return "none"
    for host in hosts:
        if authorization == f"Bearer {host.token.reveal()}":
            return "a"
        if authorization == f"Bearer {host.tenant_b_token.reveal()}":
            return "b"
    return "other"


def _sent(request: httpx.Request, hosts: list[Any]) -> Sent:
    headers = tuple((k, v) for k, v in request.headers.items() if k.lower() not in ("authorization", "host"))
    try:
        body = request.read()
    except httpx.RequestNotRead:  # pragma: no cover - a streamed body the suite never rewinds
        body = b""
    return Sent(
        request.method,
        request.url.raw_path.decode("ascii"),
        headers,
        _label(request.headers.get("authorization"), hosts),
        body,
    )


@contextlib.contextmanager
def recording() -> Iterator[list[Sent]]:
    """Record every request the harness's client sends while the block runs, and the embedded
    hosts it boots (to tell their tokens apart)."""
    from conformance import client, plugin

    sent: list[Sent] = []
    hosts: list[Any] = []
    boot, handle = plugin.boot_embedded, client._DeadlineTransport.handle_request

    def booting() -> Any:
        host = boot()
        hosts.append(host)
        return host

    def handling(self: Any, request: httpx.Request) -> httpx.Response:
        sent.append(_sent(request, hosts))
        return handle(self, request)

    with (
        mock.patch.object(plugin, "boot_embedded", booting),
        mock.patch.object(client._DeadlineTransport, "handle_request", handling),
    ):
        yield sent


def record_suite() -> tuple[list[Sent], float, int]:
    """Run the suite in this process against the embedded host: (requests, wall seconds, exit code)."""
    from conformance import cli

    with tempfile.TemporaryDirectory(prefix="openwop-replay-") as root, recording() as sent:
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["run", "--report", str(Path(root) / "bundle.json")])
        return list(sent), time.perf_counter() - started, int(code)


def replay(sent: list[Sent]) -> dict[str, float]:
    """Boot a fresh embedded host and send `sent` with a bare client: seconds to boot, to send."""
    from conformance.embedded import boot_embedded

    started = time.perf_counter()
    host = boot_embedded()
    booted = time.perf_counter() - started
    try:
        credentials = {
            "a": f"Bearer {host.token.reveal()}",
            "b": f"Bearer {host.tenant_b_token.reveal()}",
            "other": INVALID_CREDENTIAL,
        }
        with httpx.Client(base_url=host.url, timeout=60, follow_redirects=False) as bare:
            started = time.perf_counter()
            for s in sent:
                headers = dict(s.headers)
                if s.credential in credentials:
                    headers["Authorization"] = credentials[s.credential]
                bare.request(s.method, s.target, headers=headers, content=s.body or None)
            sending = time.perf_counter() - started
    finally:
        host.stop()
    return {"boot": booted, "requests": sending}


def save(sent: list[Sent], path: Path) -> None:
    rows = [
        {
            "m": s.method,
            "t": s.target,
            "h": list(s.headers),
            "c": s.credential,
            "b": base64.b64encode(s.body).decode(),
        }
        for s in sent
    ]
    path.write_text(json.dumps(rows), encoding="utf-8")


def load(path: Path) -> list[Sent]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [Sent(r["m"], r["t"], tuple(map(tuple, r["h"])), r["c"], base64.b64decode(r["b"])) for r in rows]


def play_in_subprocess(path: Path) -> float:
    """Wall seconds of `python -m bench.suite_replay --play PATH`, as a shell runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWOP_")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.suite_replay", "--play", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the replay exited {done.returncode}: {done.stderr[-500:]}")
    return seconds


def figures(suite_runs: int = 3, replays: int = 3) -> dict[str, Any]:
    """The suite's wall time as a user runs it, its request count, and the replay of those requests
    by a bare client in a subprocess of its own (medians)."""
    from bench import suite_wall_time

    sent, in_process, code = record_suite()
    if code != 0:
        raise RuntimeError(f"the suite exited {code} while recording: no floor from a failing run")
    wall = suite_wall_time.measure(suite_runs, workers=0, echo=lambda _: None)
    with tempfile.TemporaryDirectory(prefix="openwop-replay-") as root:
        path = Path(root) / "requests.json"
        save(sent, path)
        played = [play_in_subprocess(path) for _ in range(replays)]
    in_process_replay = replay(sent)
    floor = statistics.median(played)
    return {
        "requests": len(sent),
        "suiteWallSeconds": wall["median"],
        "suiteInProcessSeconds": in_process,
        "replaySeconds": floor,
        "replayInProcessBootSeconds": in_process_replay["boot"],
        "replayInProcessRequestSeconds": in_process_replay["requests"],
        "ratio": wall["median"] / floor,
        "byCredential": {k: sum(s.credential == k for s in sent) for k in ("a", "b", "none", "other")},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.suite_replay", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="suite runs and replays (medians)")
    parser.add_argument("--play", type=Path, help="replay the requests recorded in this file, and exit")
    args = parser.parse_args(argv)
    if args.play:
        replay(load(args.play))
        return 0
    print(json.dumps(figures(args.runs, args.runs), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
