"""Running the host: in a background thread on a loopback port (embedded), or in the foreground."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI

from reference_host.app import create_app
from reference_host.config import HostConfig
from reference_host.parts import HostParts
from reference_host.protocol import protocol_class


@dataclass
class RunningHost:
    url: str
    server: uvicorn.Server
    thread: threading.Thread
    app: FastAPI | None = None

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        if self.app is not None:
            stop_background(self.app)
            engine = getattr(self.app.state, "engine", None)
            if engine is not None:
                engine.dispose()  # pooled connections would otherwise outlive the host


class ThreadServer(uvicorn.Server):
    """uvicorn's server for a host in a thread, which stops within milliseconds of `stop()`.

    Why: uvicorn looks at `should_exit` every 100 ms and, on shutdown, sleeps 100 ms for connections to
    close even when there are none; a test or a suite run that starts hundreds of hosts spends most of
    their life in those sleeps. Here the tick is 10 ms, and a server with no open connection and no
    running task closes its sockets at once; with connections open, uvicorn's own shutdown runs.
    """

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            await asyncio.sleep(0.01)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()


def start_background(app: FastAPI) -> None:
    """Start the app's background work: the distillation schedule, when one is configured."""
    scheduler = getattr(app.state, "scheduler", None)
    if scheduler is not None:
        scheduler.start()


def stop_background(app: FastAPI) -> None:
    scheduler = getattr(app.state, "scheduler", None)
    if scheduler is not None:
        scheduler.stop()


def uvicorn_config(
    app: FastAPI, config: HostConfig, parts: HostParts | None = None, **options: object
) -> uvicorn.Config:
    """uvicorn's settings for the host, the same on both start paths: the hardened h11 protocol
    (head and body timeouts, envelope on its 400 and 503, the bound on requests in progress), the
    request-head size bound, and the drain time of a graceful shutdown (SIGTERM)."""
    parts = parts or HostParts()
    return uvicorn.Config(
        app,
        http=protocol_class(
            config.header_timeout, config.max_connections, parts.envelope, config.body_timeout
        ),
        h11_max_incomplete_event_size=config.max_head_bytes,
        timeout_graceful_shutdown=config.shutdown_timeout,  # type: ignore[arg-type]
        lifespan="off",
        **options,  # type: ignore[arg-type]
    )


def start_in_thread(
    config: HostConfig, host: str = "127.0.0.1", port: int = 0, parts: HostParts | None = None
) -> RunningHost:
    """Start uvicorn on a pre-bound socket (port 0 picks a free port, so parallel hosts never clash)."""
    app = create_app(config, parts)
    # IPPROTO_TCP spelled out: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose `proto`
    # says TCP, and accepted sockets inherit it. With proto 0, every small answer (head and body in
    # two writes) waited for the client's delayed ACK: 40 ms a request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound_port = sock.getsockname()[1]
    server = ThreadServer(uvicorn_config(app, config, parts, log_level="warning", access_log=False))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="reference-host"
    )
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the reference host did not start")
        time.sleep(0.01)
    start_background(app)
    return RunningHost(url=f"http://{host}:{bound_port}", server=server, thread=thread, app=app)


def serve_forever(config: HostConfig, host: str, port: int, parts: HostParts | None = None) -> None:
    """Serve in the foreground until interrupted; exits non-zero when the port cannot be bound."""
    app = create_app(config, parts)
    server = uvicorn.Server(uvicorn_config(app, config, parts, host=host, port=port, log_level="info"))
    start_background(app)
    try:
        server.run()
    except KeyboardInterrupt:  # as `uvicorn.run` does: Ctrl-C is the ordinary way to stop
        pass
    finally:
        stop_background(app)
    if not server.started:
        sys.exit(1)
    _exit_past_stuck_work(app)


def _exit_past_stuck_work(app: FastAPI) -> None:
    """End the process even when a route's worker thread is still inside a database call.

    Why: past the drain time uvicorn cancels the requests, but a sync route runs in a worker thread
    that no cancellation reaches, and Python waits for such threads at exit. Their transactions are
    rolled back by the database when the connection goes; nothing they did was acknowledged.
    """
    engine = getattr(app.state, "engine", None)
    busy = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    deadline = time.monotonic() + 1.0
    for thread in busy:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in busy):
        sys.stderr.write("reference host: work still running after the drain time; exiting\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(0)
    if engine is not None:
        engine.dispose()
