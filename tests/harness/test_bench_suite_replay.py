"""The suite's raw-HTTP floor (bench/suite_replay.py) records what the harness sent, never a token.

The recording is written to a file the replay subprocess reads; a token in it would be a secret on
disk. Each request keeps which credential it carried as a label, and the replay, on a fresh host,
puts that host's own tokens back.
"""

from __future__ import annotations

from bench import suite_replay
from conformance import plugin
from conformance.client import HostClient


def test_a_recorded_request_names_its_credential_and_never_holds_a_token(tmp_path) -> None:
    with suite_replay.recording() as sent:
        host = plugin.boot_embedded()  # as the plugin boots it: the recording learns its tokens
        client = HostClient(host.url, host.token, timeout=10)
        try:
            client.get("/v1/capabilities")
            client.with_token(host.tenant_b_token).get("/v1/capabilities")
            client.get("/v1/capabilities", token=None)
        finally:
            client.close()
            host.stop()
    path = tmp_path / "requests.json"
    suite_replay.save(sent, path)
    saved = path.read_bytes()
    assert host.token.reveal().encode() not in saved
    assert host.tenant_b_token.reveal().encode() not in saved
    replayed = suite_replay.load(path)
    assert [(s.method, s.target, s.credential) for s in replayed] == [
        ("GET", "/v1/capabilities", "a"),
        ("GET", "/v1/capabilities", "b"),
        ("GET", "/v1/capabilities", "none"),
    ]
    assert set(suite_replay.replay(replayed)) == {"boot", "requests"}
