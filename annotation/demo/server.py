"""Serve the Django app from a thread, so that simulated annotators can use the real HTTP views."""
import threading

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler, get_internal_wsgi_application


class Handler(WSGIRequestHandler):
    # Django's handler keeps connections alive and writes a response's headers and body in separate
    # sends: with Nagle's algorithm on, the body waited for the client's delayed ACK, 40 ms a page.
    disable_nagle_algorithm = True


class QuietHandler(Handler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass


class DemoServer:
    def __init__(self, host="127.0.0.1", port=8000, quiet=True):
        try:
            self.httpd = ThreadedWSGIServer((host, port), QuietHandler if quiet else Handler)
        except OSError as exc:
            raise OSError(f"cannot listen on {host}:{port} ({exc.strerror}); is another server running there?") from exc
        self.httpd.daemon_threads = True
        self.httpd.set_app(get_internal_wsgi_application())
        self.host, self.port = host, self.httpd.server_address[1]
        self.thread = None

    @property
    def url(self):
        return f"http://{self.host}:{self.port}"

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
