"""The discovery document, negotiated once per run for the major it grades (conformance/majors), its
capability lookup (that major's rules), and the start-up checks that decide whether a host can be
graded at all (exit 2, one line, when not)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import rfc8785

from conformance.client import HostClient, Reply, json_problem
from conformance.majors import V1, Major, of
from conformance.majors.model import VERSION_HEADER, Layout
from conformance.majors.negotiation import Unplaceable, choose, offer
from conformance.outcomes import ScenarioStop
from conformance.profiles import PROFILES
from conformance.surfaces import ABSENT

DISCOVERY_PATH = "/.well-known/openwop"
EXIT_COULD_NOT_START = 2  # the one exit code for "could not start": plugin and CLI both use it
REFUSED = (401, 403)


class DiscoveryUnavailable(Exception):
    """The host cannot be graded at all: unreachable, or discovery is not a strict-JSON object."""


@dataclass(frozen=True)
class Discovery:
    url: str
    document: dict[str, Any]
    major: Major = V1  # the major this run grades, whose rules read the document
    # how the major was chosen: what the host offered, what was asked, the header sent (bundle record)
    negotiation: dict[str, Any] = field(default_factory=dict, compare=False)
    headerless: dict[str, Any] | None = field(default=None, compare=False)  # the header-less document

    @cached_property
    def sha256(self) -> str:
        """SHA-256 over the RFC 8785 canonical JSON of the document (what bundles record)."""
        return hashlib.sha256(rfc8785.dumps(self.document)).hexdigest()

    def family(self, name: str) -> tuple[Any, Layout]:
        """A capability family where the graded major reads it (v1: the root, else the legacy
        `capabilities` wrapper; v2: the closed root only)."""
        return self.major.family(self.document, name)

    def advertised(self, block: Any) -> bool:
        """Whether a family record or facet block claims what it names, under the graded major."""
        return self.major.advertised(block)

    def retention(self) -> Any:
        """The retention extension block (docs/retention-profile.md), where the graded major puts it."""
        return self.major.retention_block(self.document)

    def memory(self) -> tuple[dict[str, Any], Layout]:
        value, layout = self.family("memory")
        return (value if isinstance(value, dict) else {}), layout

    def compaction(self) -> dict[str, Any] | None:
        block = self.memory()[0].get("compaction")
        return block if isinstance(block, dict) else None

    def implementation(self) -> dict[str, Any] | None:
        value = self.document.get("implementation")
        return value if isinstance(value, dict) else None


def read_discovery(client: HostClient, requested: int | None = None) -> Discovery:
    """Negotiate the major to grade and read its discovery document (public: no credentials); raise
    DiscoveryUnavailable with one line when the host cannot be graded.

    The header-less document names the versions the host serves (versioning.md §1.1). The major graded
    is `requested` (--protocol-major) or the host's header-less default; under any other major than
    that default, and always under major 2, the document is asked for again with `OpenWOP-Version`,
    which selects its representation (capabilities.md §1). A v1 host graded at major 1 sees exactly
    the one header-less request it always did.
    """
    headerless = _fetch(client, None)
    found = offer(headerless)
    try:
        number = choose(found, requested)
    except Unplaceable as exc:
        raise DiscoveryUnavailable(f"cannot grade this host: {exc}") from None
    major = of(number)
    header = None if number == 1 and found.default in (1, None) else str(number)
    document = headerless if header is None else _fetch(client, header)
    negotiation = {
        "protocolMajor": number,
        "requested": requested,
        "offered": found.as_json(),
        "headerlessDefault": found.default,
        "headerSent": header,
    }
    discovery = Discovery(
        client.base_url + DISCOVERY_PATH,
        document,
        major,
        negotiation,
        headerless if header is not None else None,
    )
    try:
        discovery.sha256  # noqa: B018 - canonicalise now: a document RFC 8785 cannot hash is unusable
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        where = f"GET {DISCOVERY_PATH}"
        raise DiscoveryUnavailable(f"cannot read discovery: {where}: not canonicalisable ({exc})") from None
    return discovery


def _fetch(client: HostClient, header: str | None) -> dict[str, Any]:
    """One discovery GET (with `OpenWOP-Version: header` when given): a JSON object, or one line why not."""
    headers = {VERSION_HEADER: header} if header is not None else None
    try:
        reply = client.request("GET", DISCOVERY_PATH, token=None, headers=headers, allow_5xx=True)
    except ScenarioStop as exc:
        raise DiscoveryUnavailable(f"cannot read discovery: {exc.reason}") from None
    where = f"GET {DISCOVERY_PATH}" + (f" with {VERSION_HEADER}: {header}" if header else "")
    if reply.status != 200:
        raise DiscoveryUnavailable(f"cannot read discovery: {where} answered {reply.status}")
    if reply.body is None:
        raise DiscoveryUnavailable(f"cannot read discovery: {where}: {json_problem(reply)}")
    if not isinstance(reply.body, dict):
        raise DiscoveryUnavailable(f"cannot read discovery: {where} did not answer a JSON object")
    return reply.body


def speak(discovery: Discovery, *clients: HostClient | None) -> None:
    """Point each client at where this host serves the suite's paths under the graded major."""
    route = discovery.major.route(discovery.document)
    for client in clients:
        if client is not None:
            client.route = route


# -- the credential preflight ------------------------------------------------------------------------


@dataclass(frozen=True)
class Credential:
    """One key to preflight: the client carrying it and how the operator gave it (for the message)."""

    client: HostClient
    option: str  # "--host-token"
    env: str  # "OPENWOP_API_KEY"


def startup_problem(
    tenant_a: Credential, tenant_b: Credential | None, requested: int | None = None
) -> str | None:
    """Why the host cannot be graded (one line), or None: discovery first, then the credentials."""
    try:
        discovery = read_discovery(tenant_a.client, requested)
    except DiscoveryUnavailable as exc:
        return str(exc)
    speak(discovery, tenant_a.client, tenant_b.client if tenant_b else None)
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
