"""The system contract (docs/system-contract.md): signing, the reference system, the client, and
`manage.py check_system` against a conforming system and broken ones, all on local ports."""

import pytest
import requests
from django.core.management import CommandError, call_command

from evaluation.interactive.systems import signing
from evaluation.interactive.systems.client import SystemClient, SystemFailure
from evaluation.interactive.systems.reference import ReferenceSystem, respond

from .systems import SECRET, Broken, running


def test_a_signature_covers_timestamp_and_body():
    headers = signing.sign_headers("k", b'{"a":1}', now=1000)
    assert headers[signing.TIMESTAMP_HEADER] == "1000" and headers[signing.SIGNATURE_HEADER].startswith("sha256=")
    ts, sig = headers[signing.TIMESTAMP_HEADER], headers[signing.SIGNATURE_HEADER]
    assert signing.verify("k", ts, sig, b'{"a":1}', now=1010) is None
    assert "does not match" in signing.verify("k", ts, sig, b'{"a":2}', now=1010)
    assert "does not match" in signing.verify("other", ts, sig, b'{"a":1}', now=1010)
    assert "from now" in signing.verify("k", ts, sig, b'{"a":1}', now=1000 + 3600)  # a replay later
    assert "missing" in signing.verify("k", None, sig, b"")


def test_the_reference_system_refuses_an_unsigned_or_badly_signed_request():
    with running(ReferenceSystem(SECRET)) as url:
        assert requests.get(url + "/health", timeout=5).status_code == 401
        body = b'{"session_id": "x", "goal": null, "locale": "en-US"}'
        forged = {**signing.sign_headers("wrong", body), "Content-Type": "application/json"}
        refused = requests.post(url + "/sessions", data=body, headers=forged, timeout=5)
        assert refused.status_code == 401 and "signature" in refused.json()["error"]
        assert SystemClient(url, SECRET, timeout=5).health()["status"] == "ok"


def test_a_conversation_with_the_reference_system_offers_a_matching_record():
    with running(ReferenceSystem(SECRET)) as url:
        client = SystemClient(url, SECRET, timeout=5)
        opening = client.open("s1", goal={"restaurant": {"info": {"food": "chinese"}}})
        history = [{"role": "system", "text": opening.text}]
        reply = client.turn("s1", 0, "A cheap chinese place in the centre please", history, opening.state)
        assert reply.offered == {"domain": "restaurant", "name": "Golden Wok", "food": "chinese", "area": "centre", "pricerange": "cheap"}
        again = client.turn("s1", 0, "A cheap chinese place in the centre please", history, opening.state)
        assert again.text == reply.text  # a retried turn gets the same reply
        assert client.end("s1", "success") == {"ok": True}
        with pytest.raises(ValueError):
            client.end("s1", "bored")


def test_the_weaker_variant_ignores_area_and_price():
    strong = respond({}, "an expensive italian restaurant in the south")
    weak = respond({}, "an expensive italian restaurant in the south", weaker=True)
    assert "offered" not in strong and "no expensive south italian" in strong["text"]
    assert weak["offered"]["name"] == "Casa Verde"  # italian, but neither expensive nor asked-for area checked


def test_the_client_turns_every_failure_into_a_reason():
    with running(Broken("error")) as url:
        with pytest.raises(SystemFailure, match="HTTP 500"):
            SystemClient(url, SECRET, timeout=5).turn("s", 0, "hi", [], None)
    with running(Broken("slow", delay=1.0)) as url:
        with pytest.raises(SystemFailure, match="no reply within 0.3 s"):
            SystemClient(url, SECRET, timeout=0.3).turn("s", 0, "hi", [], None)
    with pytest.raises(SystemFailure, match="cannot reach"):
        SystemClient("http://127.0.0.1:9", SECRET, timeout=1).health()


def _check(url, *extra):
    from io import StringIO

    out = StringIO()
    try:
        call_command("check_system", url, *extra, stdout=out)
        failed = None
    except CommandError as exc:
        failed = str(exc)
    lines = out.getvalue().splitlines()
    return {line.split(":")[0]: line for line in lines}, failed


def test_check_system_passes_a_conforming_system():
    with running(ReferenceSystem(SECRET)) as url:
        lines, failed = _check(url, "--secret", SECRET)
    assert failed is None
    assert set(lines) == {"PASS health", "PASS opening", "PASS turns", "PASS retried turn", "PASS latency", "PASS end", "PASS offensive words"}


@pytest.mark.parametrize(
    "fault, failing, reason",
    [
        ("error", "turns", "HTTP 500"),
        ("flaky_retry", "retried turn", "sent again got"),
        ("missing_end", "turns", "'end' must be true or false"),
        ("slow", "turns", "no reply within 1 s"),
    ],
)
def test_check_system_fails_a_broken_system_with_the_reason(fault, failing, reason):
    with running(Broken(fault)) as url:
        lines, failed = _check(url, "--secret", SECRET, "--timeout", "1")
    assert failed and "rules failed" in failed
    assert reason in lines[f"FAIL {failing}"], lines
    assert "PASS health" in lines  # the other rules are still reported


def test_check_system_with_the_wrong_secret_fails_every_rule():
    with running(ReferenceSystem(SECRET)) as url:
        lines, failed = _check(url, "--secret", "not-it")
    assert failed and all(key.startswith("FAIL") for key in lines) and "401" in lines["FAIL health"]


def test_check_system_refuses_a_url_that_is_not_http():
    with pytest.raises(CommandError, match="not an http"):
        call_command("check_system", "ftp://example")


def test_the_reference_system_refuses_a_secret_quorum_would_refuse_to_register(capsys):
    from evaluation.interactive.systems import reference

    with pytest.raises(SystemExit) as stopped:
        reference.main(["--port", "0", "--secret", "fifteen-chars!!"])  # 15 characters
    assert stopped.value.code == 2
    assert "--secret must be at least 16 characters, as Quorum asks when the system is registered" in capsys.readouterr().err
