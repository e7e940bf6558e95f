"""Accounts (issue 25, item 5): an organizer cannot deactivate a superuser or another organizer;
the login page, the API token and the admin's login are rate-limited per account and per address
(django-axes) with status 429 and a message saying what to do."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import Worker
from quorum.roles import make_annotator, make_organizer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.AXES_FAILURE_LIMIT = 3


def _user(name, **fields):
    return get_user_model().objects.create_user(name, password=f"{name}-right-pass-1", **fields)


@pytest.mark.parametrize("kind", ["superuser", "organizer"])
def test_an_organizer_cannot_deactivate_a_superuser_or_another_organizer(organizer, kind):
    target = _user("boss", is_superuser=kind == "superuser", is_staff=kind == "superuser")
    if kind == "organizer":
        make_organizer(target)
    worker = make_annotator(target)  # they also annotate, so they are on the team page
    client = Client()
    client.force_login(organizer)
    answer = client.post(f"/organize/team/{worker.pk}/active/", {"active": "0"}, follow=True)
    assert answer.status_code == 200 and "only an administrator can deactivate them" in answer.content.decode()
    target.refresh_from_db()
    assert target.is_active
    plain = make_annotator(_user("ann"))
    client.post(f"/organize/team/{plain.pk}/active/", {"active": "0"})
    assert not Worker.objects.get(pk=plain.pk).user.is_active  # an annotator still can be


def _login(client, username, password, ip="10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_the_login_page_locks_an_account_after_the_limit_with_a_clear_429():
    _user("ann")
    client = Client()
    for n in range(2):
        assert _login(client, "ann", f"wrong-{n}", ip=f"10.0.0.{n + 1}").status_code == 200  # the form again
    assert _login(client, "ann", "wrong-3", ip="10.0.0.3").status_code == 429  # the limit-th failure locks
    locked = _login(client, "ann", "ann-right-pass-1", ip="10.9.9.9")  # right password, other address: the account is locked
    assert locked.status_code == 429 and "Too many failed sign-in attempts" in locked.content.decode()
    assert int(locked["Retry-After"]) > 0
    _user("bob")
    assert _login(Client(), "bob", "bob-right-pass-1", ip="10.9.9.9").status_code == 302  # another account is not


def test_the_login_page_locks_an_address_trying_many_accounts():
    for name in ("a1", "a2", "a3", "a4"):
        _user(name)
    client = Client()
    for name in ("a1", "a2", "a3"):
        _login(client, name, "wrong", ip="10.6.6.6")
    assert _login(client, "a4", "a4-right-pass-1", ip="10.6.6.6").status_code == 429
    assert _login(Client(), "a4", "a4-right-pass-1", ip="10.7.7.7").status_code == 302


def test_the_api_token_is_rate_limited_with_a_json_429():
    _user("tok")
    api = APIClient()
    for _ in range(2):
        assert api.post("/api/token/", {"username": "tok", "password": "wrong"}, format="json", REMOTE_ADDR="10.1.1.1").status_code == 400
    assert api.post("/api/token/", {"username": "tok", "password": "wrong"}, format="json", REMOTE_ADDR="10.1.1.1").status_code == 429
    locked = api.post("/api/token/", {"username": "tok", "password": "tok-right-pass-1"}, format="json", REMOTE_ADDR="10.1.1.1")
    assert locked.status_code == 429 and "Too many failed sign-in attempts" in locked.json()["detail"]


def test_the_admin_login_is_rate_limited():
    _user("root", is_staff=True, is_superuser=True)
    client = Client()
    for _ in range(3):
        client.post("/admin/login/?next=/admin/", {"username": "root", "password": "wrong"}, REMOTE_ADDR="10.2.2.2")
    locked = client.post("/admin/login/?next=/admin/", {"username": "root", "password": "root-right-pass-1"}, REMOTE_ADDR="10.2.2.2")
    assert locked.status_code == 429


def test_a_success_clears_the_accounts_count():
    _user("eve")
    client = Client()
    _login(client, "eve", "wrong")
    _login(client, "eve", "wrong")
    assert _login(client, "eve", "eve-right-pass-1").status_code == 302
    client.logout()
    _login(client, "eve", "wrong")
    _login(client, "eve", "wrong")
    assert _login(client, "eve", "eve-right-pass-1").status_code == 302


def test_the_log_keeps_lockouts_and_leaves_out_successful_logins(caplog):
    """Four lines of django-axes per successful login drowned the demo's report and every server
    log; a lock-out is still logged, as a warning."""
    _user("liv")
    client = Client()
    assert _login(client, "liv", "liv-right-pass-1").status_code == 302
    assert not [r for r in caplog.records if r.name.startswith("axes")]
    for n in range(3):
        _login(Client(), "liv", f"wrong-{n}")
    assert any(r.name.startswith("axes") and r.levelname == "WARNING" and "Locking out" in r.getMessage() for r in caplog.records)
