"""Serve the Django app from a thread, so that simulated annotators can use the real HTTP views."""
import threading

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler, get_internal_wsgi_application
from django.db import connections


class Handler(WSGIRequestHandler):
    # Django's handler keeps connections alive and writes a response's headers and body in separate
    # sends: with Nagle's algorithm on, the body waited for the client's delayed ACK, 40 ms a page.
    disable_nagle_algorithm = True


class QuietHandler(Handler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass


class ConnectionKeepingServer(ThreadedWSGIServer):
    """Each HTTP connection's thread keeps one database connection for all the requests it
    answers, closed when the HTTP connection ends (Django's server closes a thread's connections
    then). Without it every request opened a connection (with SQLite: opened the file, read the
    schema, set its pragmas) and closed it at the request's end. The setting is changed on the
    thread's own connection objects only, never in the shared settings."""

    def process_request_thread(self, request, client_address):
        for conn in connections.all():
            conn.settings_dict = {**conn.settings_dict, "CONN_MAX_AGE": None}
        super().process_request_thread(request, client_address)


class DemoServer:
    def __init__(self, host="127.0.0.1", port=8000, quiet=True, keep_connections=False):
        """`keep_connections`: one database connection per HTTP connection (ConnectionKeepingServer),
        for a process of its own such as `manage.py demo`; off where the server runs inside another
        process's tests, whose databases an idle kept-alive connection would hold."""
        server_class = ConnectionKeepingServer if keep_connections else ThreadedWSGIServer
        try:
            self.httpd = server_class((host, port), QuietHandler if quiet else Handler)
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
