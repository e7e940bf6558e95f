"""A small threaded HTTP server that runs in the background of a test or a benchmark."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small response must not wait for a delayed ACK

    def log_message(self, *args):  # keep test output clean
        pass

    def _handle(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, body, headers = self.server.fake.handle(method, self.path, dict(self.headers), raw)
        if self.server.fake.holds(self.path):
            self.server.fake.replies.wait()  # held by hold_replies(): the call is done, the caller not told
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")


class FakeServer:
    """Subclasses implement handle(method, path, headers, raw_body) -> (status, json_body, headers)."""

    def __init__(self, host="127.0.0.1", port=0):
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self
        self._thread = None
        self.lock = threading.Lock()
        self.replies = threading.Event()
        self.replies.set()
        self._held_paths = ""

    def hold_replies(self, path_containing: str = ""):
        """From now on, carry out each call (whose path contains `path_containing`, default all) but
        keep its answer back until `release_replies`: a caller killed meanwhile has had its call made
        at the provider and never heard of it (the crash tests' window between the provider call and
        the local record)."""
        self._held_paths = path_containing
        self.replies.clear()

    def holds(self, path: str) -> bool:
        return not self.replies.is_set() and self._held_paths in path and not path.startswith("/_control")

    def release_replies(self):
        self.replies.set()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self):
        # shutdown() waits for the loop's next poll: at the default half second, every stop did.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.release_replies()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
