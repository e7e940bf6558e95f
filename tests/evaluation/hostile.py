"""A hostile dialog system on a loopback port (port 0): every request gets the raw HTTP reply a
test gives, optionally dripped a few bytes at a time, so the client's bounds can be tried against
what a malicious system really sends. Nothing here reaches beyond 127.0.0.1."""
import contextlib
import gzip
import json
import socket
import socketserver
import threading
import time


def response(body: bytes, status: str = "200 OK", headers: dict | None = None) -> bytes:
    head = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close", **(headers or {})}
    lines = "".join(f"{k}: {v}\r\n" for k, v in head.items() if v is not None)
    return f"HTTP/1.1 {status}\r\n{lines}\r\n".encode() + body


def ok_reply(**fields) -> bytes:
    return response(json.dumps({"text": "hello", "state": None, "end": False, **fields}).encode())


def raw_json(text: str) -> bytes:
    return response(text.encode("utf-8", "surrogatepass"))


#: name -> the raw reply; every one must become a failed turn with a reason, never an exception.
CASES = {
    "nan": raw_json('{"text": "x", "state": NaN, "end": false}'),
    "infinity": raw_json('{"text": "x", "state": Infinity, "end": false}'),
    "minus_infinity": raw_json('{"text": "x", "state": -Infinity, "end": false}'),
    "overflowing_number": raw_json('{"text": "x", "state": 1e999, "end": false}'),
    "huge_integer": raw_json('{"text": "x", "state": ' + "9" * 5000 + ', "end": false}'),
    "nul_in_text": raw_json('{"text": "a\\u0000b", "state": null, "end": false}'),
    "nul_in_key": raw_json('{"text": "a", "state": {"\\u0000": 1}, "end": false}'),
    "lone_surrogate": raw_json('{"text": "a\\ud800b", "state": null, "end": false}'),
    "raw_surrogate_bytes": response(b'{"text": "a\xed\xa0\x80", "state": null, "end": false}'),
    "invalid_utf8": response(b'{"text": "\xff\xfe", "state": null, "end": false}'),
    "deep_nesting": raw_json('{"text": "x", "end": false, "state": ' + "[" * 5000 + "]" * 5000 + "}"),
    "deep_nesting_unclosed": raw_json("[" * 100000),
    "not_json": raw_json("<html>hello</html>"),
    "empty_body": response(b""),
    "truncated_body": response(b'{"text": "x"', headers={"Content-Length": "500"}),
    "too_large_declared": response(b"{}", headers={"Content-Length": str(10**9)}),
    "too_large_chunked": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                          b"Connection: close\r\n\r\n" + (b"4000\r\n" + b" " * 0x4000 + b"\r\n") * 40 + b"0\r\n\r\n"),
    "too_large_no_length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + b" " * 300_000,
    "gzip_bomb": response(gzip.compress(b" " * 60_000_000), headers={"Content-Encoding": "gzip"}),
    "corrupt_gzip": response(b"not gzip at all", headers={"Content-Encoding": "gzip"}),
    "unknown_encoding": response(b"xx", headers={"Content-Encoding": "br"}),
    "text_too_long": ok_reply(text="x" * 6000),
    "wrong_shape": raw_json('["text", "state", "end"]'),
    "redirect_to_metadata": response(b"", "302 Found", {"Location": "http://169.254.169.254/latest/meta-data/"}),
    "status_500": response(b'{"error": "boom"}', "500 Internal Server Error"),
    "garbage_status_line": b"HELLO WORLD\r\n\r\n",
    "close_at_once": b"",
}


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        server = self.server
        sock = self.request
        sock.settimeout(5)
        with server.counting:
            server.active += 1
            server.most_active = max(server.most_active, server.active)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
            while len(rest) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            server.requests.append(head.split(b"\r\n")[0].decode("latin-1"))
            reply = server.reply_for(head.split(b"\r\n")[0].decode("latin-1"))
            if server.drip is None:
                sock.sendall(reply)
            else:
                every, size = server.drip
                for start in range(0, len(reply), size):
                    if server.stopped.is_set():
                        return
                    sock.sendall(reply[start:start + size])
                    time.sleep(every)
        except OSError:
            pass
        finally:
            with server.counting:
                server.active -= 1


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextlib.contextmanager
def hostile(reply: bytes | None = None, *, drip: tuple[float, int] | None = None, opening: bytes | None = None):
    """Serve `reply` to every request (or `opening` to POST /sessions, health always conforming);
    `drip=(seconds, size)` sends `size` bytes every `seconds`. Yields the base URL and the server
    (its `requests` lists the request lines received, `most_active` the most connections open at once)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests, server.drip, server.stopped = [], drip, threading.Event()
    server.active = server.most_active = 0  # connections open at once: what Quorum's call slots bound
    server.counting = threading.Lock()
    health = response(json.dumps({"status": "ok", "system": "hostile", "version": "1"}).encode())

    def reply_for(line: str) -> bytes:
        if line.startswith("GET ") and "/health" in line:
            return health
        if opening is not None and line.startswith("POST ") and line.split()[1].endswith("/sessions"):
            return opening
        return server.reply if server.reply is not None else ok_reply()

    server.reply = reply  # a test may change it between requests
    server.reply_for = reply_for
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server
    finally:
        server.stopped.set()
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
