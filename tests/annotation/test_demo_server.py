"""The demo's server (annotation/demo/server.py), which `make demo`, its simulated annotators and
`rehearse` talk to over HTTP."""
import socket

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
