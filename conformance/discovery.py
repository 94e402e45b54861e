"""The discovery document, read once per run, capability lookup root-first (RFC 0073), and the
start-up checks that decide whether a host can be graded at all (exit 2, one line, when not)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import rfc8785

from conformance.client import HostClient, Reply, json_problem
from conformance.outcomes import ScenarioStop
from conformance.profiles import PROFILES
from conformance.surfaces import ABSENT

DISCOVERY_PATH = "/.well-known/openwop"
EXIT_COULD_NOT_START = 2  # the one exit code for "could not start": plugin and CLI both use it
REFUSED = (401, 403)
Layout = Literal["root", "wrapper", "absent"]


class DiscoveryUnavailable(Exception):
    """The host cannot be graded at all: unreachable, or discovery is not a strict-JSON object."""


@dataclass(frozen=True)
class Discovery:
    url: str
    document: dict[str, Any]

    @cached_property
    def sha256(self) -> str:
        """SHA-256 over the RFC 8785 canonical JSON of the document (what bundles record)."""
        return hashlib.sha256(rfc8785.dumps(self.document)).hexdigest()

    def family(self, name: str) -> tuple[Any, Layout]:
        """A capability family from the document root, else from the legacy `capabilities` wrapper."""
        if name in self.document:
            return self.document[name], "root"
        wrapper = self.document.get("capabilities")
        if isinstance(wrapper, dict) and name in wrapper:
            return wrapper[name], "wrapper"
        return None, "absent"

    def memory(self) -> tuple[dict[str, Any], Layout]:
        value, layout = self.family("memory")
        return (value if isinstance(value, dict) else {}), layout

    def compaction(self) -> dict[str, Any] | None:
        block = self.memory()[0].get("compaction")
        return block if isinstance(block, dict) else None

    def implementation(self) -> dict[str, Any] | None:
        value = self.document.get("implementation")
        return value if isinstance(value, dict) else None


def read_discovery(client: HostClient) -> Discovery:
    """GET discovery without credentials (it is public); raise DiscoveryUnavailable with one line."""
    try:
        reply = client.request("GET", DISCOVERY_PATH, token=None, allow_5xx=True)
    except ScenarioStop as exc:
        raise DiscoveryUnavailable(f"cannot read discovery: {exc.reason}") from None
    where = f"GET {DISCOVERY_PATH}"
    if reply.status != 200:
        raise DiscoveryUnavailable(f"cannot read discovery: {where} answered {reply.status}")
    if reply.body is None:
        raise DiscoveryUnavailable(f"cannot read discovery: {where}: {json_problem(reply)}")
    if not isinstance(reply.body, dict):
        raise DiscoveryUnavailable(f"cannot read discovery: {where} did not answer a JSON object")
    discovery = Discovery(url=client.base_url + DISCOVERY_PATH, document=reply.body)
    try:
        discovery.sha256  # noqa: B018 - canonicalise now: a document RFC 8785 cannot hash is unusable
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise DiscoveryUnavailable(f"cannot read discovery: {where}: not canonicalisable ({exc})") from None
    return discovery


# -- the credential preflight ------------------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """One key to preflight: the client carrying it and how the operator gave it (for the message)."""

    client: HostClient
    option: str  # "--host-token"
    env: str  # "OPENWOP_API_KEY"


def startup_problem(tenant_a: Credential, tenant_b: Credential | None) -> str | None:
    """Why the host cannot be graded (one line), or None: discovery first, then the credentials."""
    try:
        discovery = read_discovery(tenant_a.client)
    except DiscoveryUnavailable as exc:
        return str(exc)
    return credential_problem(discovery, tenant_a, tenant_b)


def credential_problem(discovery: Discovery, tenant_a: Credential, tenant_b: Credential | None) -> str | None:
    """One authenticated request per key to the first advertised memory surface that is present.

    401/403 there means every scenario would grade an authentication failure instead of behaviour,
    so the run cannot start. An absent surface (404/405) is no credential problem: try the next one;
    scenarios will report it BLOCKED. No advertised memory family: nothing to preflight.
    """
    surfaces = advertised_surfaces(discovery, tenant_a.client)
    for credential in (tenant_a, tenant_b):
        if credential is None:
            continue
        refused = _first_refusal(credential.client, surfaces)
        if refused is None:
            continue
        where, reply = refused
        if credential.client.token is None:
            return (
                f"the host requires a bearer key: pass {credential.option} (or {credential.env}); "
                f"{where} answered {reply.status}"
            )
        return f"the host rejected the key given by {credential.option}: {_refusal_words(reply)} ({where})"
    return None


def advertised_surfaces(discovery: Discovery, client: HostClient) -> list[tuple[str, str, Any]]:
    """(method, path, body) of a cheap authenticated request per advertised memory profile."""
    return [
        gate.preflight(client, block)
        for gate in PROFILES
        if (block := gate.advertised(discovery)) is not None
    ]


def _first_refusal(client: HostClient, surfaces: list[tuple[str, str, Any]]) -> tuple[str, Reply] | None:
    """The first present surface's answer if it refused the credential; None if it accepted it."""
    for method, path, body in surfaces:
        try:
            reply = client.request(method, path, json_body=body, allow_5xx=True)
        except ScenarioStop:
            return None  # transport trouble is no credential verdict: the scenarios will show it
        if reply.status in ABSENT:
            continue
        return (f"{method} {path}", reply) if reply.status in REFUSED else None
    return None


def _refusal_words(reply: Reply) -> str:
    """ "401 invalid_credential": the status and the envelope's error code, if it has a sane one."""
    body = reply.body if isinstance(reply.body, dict) else {}
    code = body.get("error")
    if isinstance(code, dict):
        code = code.get("code")
    if isinstance(code, str) and re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", code):
        return f"{reply.status} {code}"
    return str(reply.status)
