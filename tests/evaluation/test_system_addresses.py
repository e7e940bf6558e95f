"""Where Quorum's server may connect (issue 25, item 2): a system's URL is checked at registration
and at every call, after DNS resolution, against the address policy. Each SSRF case is a test;
nothing leaves 127.0.0.1 (the refused addresses are never connected to)."""
import socket
import threading

import pytest

from evaluation.errors import EvaluationInputError
from evaluation.interactive.services.systems import client_for, register_system
from evaluation.interactive.systems.addresses import AddressPolicy, AddressRefused
from evaluation.interactive.systems.client import SystemFailure
from evaluation.models import DialogSystem

from .hostile import hostile

SECRET = "a-secret-of-twenty-chars"

REFUSED_URLS = {
    "loopback": "http://127.0.0.1:8765",
    "loopback_other": "http://127.1.2.3:22",
    "localhost": "http://localhost:6379",
    "ipv6_loopback": "http://[::1]:5432",
    "unspecified": "http://0.0.0.0:8000",
    "ipv4_mapped": "http://[::ffff:127.0.0.1]:8000",
    "metadata": "http://169.254.169.254/latest",
    "link_local": "http://169.254.1.1",
    "ipv6_link_local": "http://[fe80::1]:80",
    "private_10": "http://10.0.0.5:9200",
    "private_172": "http://172.16.3.4",
    "private_192": "https://192.168.1.1",
    "cgnat": "http://100.64.0.1",
    "unique_local": "http://[fd00::1]",
    "decimal_ip": "http://2130706433:80",
    "octal_ip": "http://0177.0.0.1",
    "hex_ip": "http://0x7f000001",
    "multicast": "http://224.0.0.1",
    "credentials": "http://user:pass@example.org",
    "credentials_empty": "http://@example.org",
    "bad_port": "http://example.org:99999",
    "not_http": "file:///etc/passwd",
    "gopher": "gopher://127.0.0.1:6379/_INFO",
    "query": "http://example.org/?redirect=http://127.0.0.1",
    "unresolvable": "http://no-such-host.invalid",
}


@pytest.fixture
def deny_all(settings):
    settings.QUORUM_SYSTEM_ALLOWED_HOSTS = []


@pytest.mark.parametrize("case", sorted(REFUSED_URLS))
def test_registration_refuses_every_ssrf_target_and_stores_nothing(db, deny_all, case):
    with pytest.raises(EvaluationInputError) as refused:
        register_system(name="x", url=REFUSED_URLS[case], secret=SECRET)
    assert not DialogSystem.objects.exists()
    assert "HTTP" not in str(refused.value)  # no status code of whatever answers there


def test_the_organizer_page_refuses_a_private_target_with_400(db, deny_all, organizer):
    from django.test import Client

    client = Client()
    client.force_login(organizer)
    answer = client.post("/evaluation/systems/register/", {"name": "x", "url": "http://10.0.0.1:9", "secret": SECRET})
    assert answer.status_code == 400 and "private address" in answer.content.decode()
    api = client.post("/api/evaluation/systems/", {"name": "x", "url": "http://[::1]:9", "secret": SECRET}, content_type="application/json")
    assert api.status_code == 400 and "loopback" in api.content.decode()


def test_every_call_checks_the_address_again_and_never_connects_to_a_refused_one(db, settings):
    with hostile() as (url, server):
        system = register_system(name="was-allowed", url=url, secret=SECRET)  # loopback allowed then
        settings.QUORUM_SYSTEM_ALLOWED_HOSTS = []  # the operator withdraws it
        with pytest.raises(SystemFailure, match="loopback") as failure:
            client_for(system.url, SECRET).turn("s", 0, "hi", [], None)
    assert "HTTP" not in failure.value.reason and not [r for r in server.requests if "/turns" in r]


def test_a_name_that_resolves_to_a_refused_address_is_refused_after_resolution(monkeypatch):
    policy = AddressPolicy.from_setting([])
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("8.8.8.8", 80)),
                                                                 (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", 80))])
    with pytest.raises(AddressRefused, match="private"):  # one refused address among several is enough
        policy.resolve("rebinding.example", 80)


def test_the_call_connects_to_the_address_that_was_checked_not_a_second_lookup(monkeypatch):
    """DNS rebinding: the host is resolved once per call and the socket goes to the checked address."""
    with hostile() as (url, _server):
        port = int(url.rsplit(":", 1)[1])
        looked_up = []

        def resolve(host, _port):
            looked_up.append(host)
            return ["127.0.0.1"]

        from evaluation.interactive.systems.client import SystemClient

        connected = []
        real = socket.create_connection
        monkeypatch.setattr(socket, "create_connection", lambda address, *a, **k: connected.append(address) or real(address, *a, **k))
        SystemClient(f"http://system.example:{port}", SECRET, timeout=2, resolve=resolve).turn("s", 0, "hi", [], None)
    assert looked_up == ["system.example"] and connected == [("127.0.0.1", port)]


@pytest.mark.parametrize("allowed, host, address, ok", [
    (["10.20.0.0/16"], "lab", "10.20.3.4", True),
    (["10.20.0.0/16"], "lab", "10.21.0.1", False),
    (["lab-gpu-1"], "lab-gpu-1", "192.168.5.5", True),
    (["lab-gpu-1"], "LAB-GPU-1.", "192.168.5.5", True),
    (["lab-gpu-1"], "lab-gpu-1", "169.254.169.254", False),  # metadata stays refused for a named host
    (["169.254.169.254"], "x", "169.254.169.254", True),  # unless the address itself is listed
    ([], "x", "93.184.216.34", True),
    ([], "x", "2606:2800:220:1::", True),
])
def test_the_allow_setting(allowed, host, address, ok):
    assert (AddressPolicy.from_setting(allowed).refusal(host, address) is None) is ok


def test_a_bad_range_in_the_setting_is_refused():
    with pytest.raises(AddressRefused, match="not an address range"):
        AddressPolicy.from_setting(["10.0.0.0/99"])


def test_a_name_server_that_never_answers_costs_a_call_its_deadline_not_the_worker(db, settings, monkeypatch):
    """Issue 25 (d): getaddrinfo cannot be interrupted; the call gives up at its deadline and says
    why, while the hung lookup is still waiting (so the call did not wait for it)."""
    release = threading.Event()
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: release.wait(30) and [])
    settings.QUORUM_SYSTEM_TURN_TIMEOUT_SECONDS = 0.3
    try:
        with pytest.raises(SystemFailure, match="did not resolve within 0.3 s"):
            client_for("http://slow-dns.example:80", SECRET).turn("s", 0, "hi", [], None)
        assert not release.is_set()
        with pytest.raises(EvaluationInputError, match="did not resolve within"):  # registration too
            register_system(name="x", url="http://slow-dns.example:80", secret=SECRET)
        assert not release.is_set() and not DialogSystem.objects.exists()
    finally:
        release.set()


def test_check_system_applies_the_servers_address_policy(settings):
    """Issue 25 (d): the command line check calls what the server may call, nothing else."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    with hostile() as (url, server):
        settings.QUORUM_SYSTEM_ALLOWED_HOSTS = []
        out = StringIO()
        with pytest.raises(CommandError, match="rules failed"):
            call_command("check_system", url, "--secret", SECRET, "--timeout", "2", stdout=out)
        assert "loopback" in out.getvalue() and "HTTP" not in out.getvalue() and not server.requests
        settings.QUORUM_SYSTEM_ALLOWED_HOSTS = ["127.0.0.1"]
        call_command("check_system", url, "--secret", SECRET, "--timeout", "2", stdout=StringIO())
    assert server.requests  # allowed: it was called
