"""Quorum's reference restaurant system: rule-based, over a small entity database, speaking the
system contract (docs/system-contract.md). It serves three purposes: `check_system` is tested
against it, the interactive task type's browser test chats with it, and organizers can point a
campaign at it as a baseline. `weaker=True` ignores the area and price the user asks for, so a
campaign over both variants has a known better system.

It is stateless: the reply to a turn is computed from the echoed `state` and the user's text only,
so a retried turn gets the same reply without the system remembering anything (the contract's
idempotency rule). Run it with `python -m evaluation.interactive.systems.reference --port 8765 --secret S`.
"""
import argparse
import hashlib
import json
import re
import threading
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from evaluation.interactive.systems.signing import MIN_SECRET_CHARS, verify_headers

NAME = "quorum-reference"
VERSION = "1.0"

#: MultiWOZ-style restaurant db records (the fields of MultiWOZ's restaurant_db.json that matter).
RESTAURANTS = [
    {"name": "Golden Wok", "food": "chinese", "area": "centre", "pricerange": "cheap", "phone": "01223 350688"},
    {"name": "Lotus Corner", "food": "thai", "area": "north", "pricerange": "moderate", "phone": "01223 351707"},
    {"name": "The Copper Pot", "food": "british", "area": "centre", "pricerange": "expensive", "phone": "01223 352500"},
    {"name": "Saffron Lane", "food": "indian", "area": "east", "pricerange": "cheap", "phone": "01223 353110"},
    {"name": "Bistro Nord", "food": "french", "area": "north", "pricerange": "expensive", "phone": "01223 354382"},
    {"name": "Casa Verde", "food": "italian", "area": "south", "pricerange": "moderate", "phone": "01223 355166"},
    {"name": "Umami House", "food": "japanese", "area": "west", "pricerange": "expensive", "phone": "01223 356354"},
    {"name": "Pizza Piazza", "food": "italian", "area": "centre", "pricerange": "cheap", "phone": "01223 357146"},
    {"name": "Spice Route", "food": "indian", "area": "centre", "pricerange": "moderate", "phone": "01223 358071"},
    {"name": "Saigon Table", "food": "vietnamese", "area": "west", "pricerange": "cheap", "phone": "01223 359202"},
]
DB = {"restaurant": RESTAURANTS}
AREAS = ("centre", "north", "south", "east", "west")
PRICES = ("cheap", "moderate", "expensive")
OPENING = "Hello, I can help you find a restaurant. What are you looking for?"


def _words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


def understand(text: str, weaker: bool = False) -> dict:
    """The slot values and intents in one user utterance (keyword spotting; 'center' is 'centre')."""
    words = _words(text.replace("center", "centre"))
    heard = {}
    for food in sorted({r["food"] for r in RESTAURANTS}):
        if food in words:
            heard["food"] = food
    if not weaker:
        # One value per slot: the last of the list that the user named.
        for key, values in (("area", AREAS), ("pricerange", PRICES)):
            named = [v for v in values if v in words]
            if named:
                heard[key] = named[-1]
    people = re.search(r"\b(\d+)\s*(?:people|persons|guests|of us)\b", text.lower())
    if people:
        heard["people"] = people.group(1)
    intents = set()
    if words & {"book", "reserve", "reservation", "table"}:
        intents.add("book")
    if words & {"bye", "goodbye", "thanks", "thank"} and not heard:
        intents.add("bye")
    if words & {"phone", "number"}:
        intents.add("phone")
    return {"slots": heard, "intents": intents}


def respond(state, text: str, weaker: bool = False) -> dict:
    """The reply to one user turn given the echoed state: {text, state, end, offered?}. Pure."""
    state = dict(state or {})
    constraints = dict(state.get("constraints") or {})
    heard = understand(text, weaker)
    wanted = {k: v for k, v in heard["slots"].items() if k != "people"}
    if wanted:
        constraints.update(wanted)
        state.pop("offered", None)
    state["constraints"] = constraints
    if "people" in heard["slots"]:
        state["people"] = heard["slots"]["people"]
    offered = state.get("offered")
    if "bye" in heard["intents"]:
        return {"text": "Thank you for using our service. Goodbye!", "state": state, "end": True}
    if offered and heard["intents"] & {"book", "phone"}:
        return _about_the_offer(state, offered, heard["intents"])
    return _search(state, constraints)


def _about_the_offer(state: dict, offered: dict, intents: set) -> dict:
    """Book the offered restaurant or give its phone number."""
    if "book" in intents:
        people = state.get("people") or "2"
        # From the name and party, not random: a retried turn must get the same reference.
        reference = "QR" + hashlib.sha256(f"{offered['name']}|{people}".encode()).hexdigest()[:6].upper()
        booked = {**offered, "people": people, "reference": reference}
        state["booked"] = True
        return {"text": f"I have booked a table for {people} at {offered['name']}. Your reference number is {reference}.", "state": state, "end": False, "offered": booked}
    record = next(r for r in RESTAURANTS if r["name"] == offered["name"])
    return {"text": f"The phone number of {offered['name']} is {record['phone']}.", "state": state, "end": False}


def _search(state: dict, constraints: dict) -> dict:
    """Ask for constraints, say none matches, or offer the first restaurant that does."""
    if not constraints:
        return {"text": "What kind of food would you like, and in which part of town?", "state": state, "end": False}
    matches = [r for r in RESTAURANTS if all(r.get(k) == v for k, v in constraints.items())]
    if not matches:
        asked = " ".join(constraints[k] for k in ("pricerange", "area", "food") if k in constraints)
        state["constraints"] = {}
        return {"text": f"I am sorry, I have no {asked} restaurant. Would you like something else?", "state": state, "end": False}
    record = matches[0]
    offer = {"domain": "restaurant", **{k: record[k] for k in ("name", "food", "area", "pricerange")}}
    state["offered"] = offer
    return {
        "text": f"{record['name']} is a {record['pricerange']} {record['food']} restaurant in the {record['area']}. Shall I book a table?",
        "state": state, "end": False, "offered": offer,
    }


class ReferenceSystem:
    """The WSGI application. `secret`: requests must be signed with it (empty: no check)."""

    def __init__(self, secret: str = "", *, weaker: bool = False, delay: float = 0.0):
        self.secret = secret
        self.weaker = weaker
        self.turn_delay = delay  # seconds to wait before answering a turn (a slower system, for load tests)

    def __call__(self, environ, start_response):
        status, body = self.handle(environ)
        data = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    def handle(self, environ):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        if self.secret:
            refused = verify_headers(self.secret, environ, raw)
            if refused:
                return "401 Unauthorized", {"error": refused}
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "").rstrip("/")
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return "400 Bad Request", {"error": "the body is not JSON"}
        if method == "GET" and path == "/health":
            return "200 OK", {"status": "ok", "system": NAME + ("-weaker" if self.weaker else ""), "version": VERSION}
        if method == "POST" and path == "/sessions":
            return "200 OK", {"text": OPENING, "state": {"constraints": {}}, "end": False}
        turn = re.fullmatch(r"/sessions/([^/]+)/(turns|end)", path)
        if method == "POST" and turn and isinstance(body, dict):
            if turn.group(2) == "end":
                return "200 OK", {"ok": True}
            if not isinstance(body.get("text"), str):
                return "400 Bad Request", {"error": "'text' must be a string"}
            if self.turn_delay:
                time.sleep(self.turn_delay)
            return "200 OK", respond(body.get("state"), body["text"], self.weaker)
        return "404 Not Found", {"error": f"no route {method} {path}"}


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 makes many simultaneous chats wait on connect retries


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):  # one line per request would drown a test's output
        pass


def serve(app, host: str = "127.0.0.1", port: int = 0):
    """Start `app` on a local port in a daemon thread; returns (server, base_url). Stop with
    server.shutdown(); server.server_close()."""
    server = make_server(host, port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    # shutdown() waits for the loop's next poll: at the default half second, every stop did.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, f"http://{host}:{server.server_port}"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Quorum's reference restaurant system (docs/system-contract.md).")
    parser.add_argument("--host", default="127.0.0.1", help="Interface to listen on (default: local only).")
    parser.add_argument("--port", type=int, default=8765, help="Port to listen on.")
    parser.add_argument("--secret", default="", help="Refuse requests not signed with this secret (default: no check).")
    parser.add_argument("--weaker", action="store_true", help="Ignore the area and price asked for (a worse baseline).")
    parser.add_argument("--delay", type=float, default=0.0, help="Seconds to wait before answering each turn (a slower system, for load tests).")
    args = parser.parse_args(argv)
    if args.delay < 0:
        parser.error("--delay cannot be negative")
    if args.secret and len(args.secret) < MIN_SECRET_CHARS:  # Quorum would refuse to register it
        parser.error(f"--secret must be at least {MIN_SECRET_CHARS} characters, as Quorum asks when the system is registered")
    app = ReferenceSystem(args.secret, weaker=args.weaker, delay=args.delay)
    server = make_server(args.host, args.port, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
    print(f"reference system on http://{args.host}:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
