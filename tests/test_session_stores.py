"""Quorum's session stores (quorum/sessions): Django's database sessions with the read compiled
once per process. What a user relies on must hold as with Django's own stores: a logged-in page
stays logged in, a logout (here or in another process) ends the session, an expired session is
not read, and a session key nobody issued starts an anonymous session."""
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db

ENGINES = ["quorum.sessions.db", "quorum.sessions.cached_db"]


@pytest.fixture
def logged_in(settings, request):
    settings.SESSION_ENGINE = request.param
    user = get_user_model().objects.create_user("reader", password="a-long-pass-phrase")
    client = Client()
    assert client.login(username="reader", password="a-long-pass-phrase")
    return client, user


def _who(client) -> str | None:
    """The user the home page greets, or None when it sends the visitor to log in."""
    page = client.get("/")
    if page.status_code == 302:
        return None
    assert page.status_code == 200
    return page.context["user"].get_username()


@pytest.mark.parametrize("logged_in", ENGINES, indirect=True)
def test_a_logged_in_session_is_read_on_every_request(logged_in):
    client, user = logged_in
    assert _who(client) == user.get_username()
    assert _who(client) == user.get_username()


@pytest.mark.parametrize("logged_in", ENGINES, indirect=True)
def test_a_logout_ends_the_session(logged_in):
    client, _user = logged_in
    key = client.cookies["sessionid"].value
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    client.cookies["sessionid"] = key  # the old cookie, replayed
    assert _who(client) is None


@pytest.mark.parametrize("logged_in", ["quorum.sessions.db"], indirect=True)
def test_a_session_deleted_in_the_database_is_not_read(logged_in):
    """A logout in another web process deletes the row: this process, reading the database, sees it gone."""
    client, user = logged_in
    assert _who(client) == user.get_username()
    Session.objects.filter(session_key=client.cookies["sessionid"].value).delete()
    assert _who(client) is None


@pytest.mark.parametrize("logged_in", ["quorum.sessions.db"], indirect=True)
def test_an_expired_session_is_not_read(logged_in):
    client, _user = logged_in
    Session.objects.filter(session_key=client.cookies["sessionid"].value).update(expire_date=timezone.now() - timedelta(seconds=1))
    assert _who(client) is None


def test_an_unknown_session_key_is_an_anonymous_visitor(settings):
    settings.SESSION_ENGINE = "quorum.sessions.db"
    client = Client()
    client.cookies["sessionid"] = "x" * 32
    assert _who(client) is None
