"""Dialog systems on local ports for the interactive-evaluation tests: the reference system, and
broken ones built by wrapping it (nothing here reaches the internet)."""
import contextlib
import json
import time

from evaluation.interactive.systems.reference import ReferenceSystem, serve

SECRET = "test-secret"


@contextlib.contextmanager
def running(app):
    server, url = serve(app)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


class Broken(ReferenceSystem):
    """The reference system with one fault: `fault` is 'error' (500 on turns), 'flaky_retry' (a
    retried turn gets another reply), 'missing_end' (turn replies without 'end'), 'slow' (turns
    answer after `delay` seconds)."""

    def __init__(self, fault, secret=SECRET, delay=1.5):
        super().__init__(secret)
        self.fault, self.delay, self.calls = fault, delay, 0

    def handle(self, environ):
        status, body = super().handle(environ)
        if "/turns" not in environ.get("PATH_INFO", ""):
            return status, body
        self.calls += 1
        if self.fault == "error":
            return "500 Internal Server Error", {"error": "boom"}
        if self.fault == "flaky_retry":
            body = {**body, "text": f"{body['text']} (call {self.calls})"}
        if self.fault == "missing_end":
            body = {k: v for k, v in body.items() if k != "end"}
        if self.fault == "slow":
            time.sleep(self.delay)
        return status, json.loads(json.dumps(body))


def chinese_centre_goals(name="goals"):
    """A goal set of one goal (chinese food in the centre) with the reference system's restaurants
    as its database, so success with grounding can be told."""
    from evaluation.interactive.services.systems import import_goals
    from evaluation.interactive.systems.reference import RESTAURANTS

    return import_goals(
        name=name, goals_file=b'{"id": "g1", "goal": {"restaurant": {"info": {"food": "chinese", "area": "centre"}}}}\n',
        databases={"restaurant": json.dumps(RESTAURANTS).encode()},
    )
