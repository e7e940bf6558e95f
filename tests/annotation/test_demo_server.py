"""The demo's server (annotation/demo/server.py), which `make demo`, its simulated annotators and
`rehearse` talk to over HTTP."""
import socket
import threading

import pytest
import requests

from annotation.demo import server as demo_server


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "logging"])
def test_the_demo_server_answers_with_nagles_algorithm_off(monkeypatch, quiet):
    """Django's handler keeps a connection alive and sends a response's headers and its body
    apart; with Nagle's algorithm on, the body waited for the client's delayed ACK (40 ms a page,
    most of the demo's run). Each connection the server answers on has TCP_NODELAY set."""
    nodelay = []
    handle = demo_server.Handler.handle

    def recording(self):
        nodelay.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        handle(self)

    monkeypatch.setattr(demo_server.Handler, "handle", recording)
    server = demo_server.DemoServer(port=0, quiet=quiet).start()
    try:
        with requests.Session() as session:
            for _ in range(2):
                session.get(f"{server.url}/static/quorum.css", timeout=30)
    finally:
        server.stop()
    assert nodelay and all(nodelay), nodelay


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("keep, most", [(True, 1), (False, None)], ids=["kept", "per-request"])
def test_the_demo_server_keeps_one_database_connection_per_http_connection(keep, most):
    """`manage.py demo` asks for it: the requests of one kept-alive HTTP connection share one
    database connection (before, each request opened one and closed it at its end, and on SQLite
    that meant reading the schema again). Off by default, as in `rehearse`."""
    from django.contrib.auth import get_user_model
    from django.db.backends.signals import connection_created

    get_user_model().objects.create_user("reader", password="pw-for-the-demo-server")
    threads = []

    def opened(sender, connection, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            threads.append(threading.current_thread())

    connection_created.connect(opened)
    server = demo_server.DemoServer(port=0, keep_connections=keep).start()
    try:
        with requests.Session() as session:
            session.trust_env = False
            session.get(f"{server.url}/accounts/login/", timeout=30)
            login = f"{server.url}/accounts/login/"
            response = session.post(login, data={"username": "reader", "password": "pw-for-the-demo-server",
                                                 "csrfmiddlewaretoken": session.cookies.get("csrftoken", "")},
                                    headers={"Referer": login}, timeout=30)
            assert "/accounts/login/" not in response.url  # logged in: every request after it reads the session
            for page in range(3):
                # The last page ends the HTTP connection, so its thread ends without waiting out a timeout.
                session.get(f"{server.url}/", timeout=30, headers={"Connection": "close"} if page == 2 else {})
    finally:
        server.stop()
        connection_created.disconnect(opened)
        for thread in set(threads):  # the handler closes its connection when the HTTP connection ends
            thread.join(30)
    assert len(set(threads)) == 1, threads  # one HTTP connection, one handler thread
    if most is not None:
        assert len(threads) == most, threads
    else:
        assert len(threads) >= 4, threads  # the login and each page after it opened one
