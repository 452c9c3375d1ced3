"""`Deadline`: a GET that cannot outlive its deadline, against a server on 127.0.0.1.

The loader's own tests (`test_mlp_download.py`) run whole loads against mirrors; these
check the one seam they cannot reach on time: a connection whose socket opens only after
the deadline has passed (a redirect's, or a connect slower than the deadline).
"""

from __future__ import annotations

import http.client
import http.server
import threading
import time

import pytest

from jaxtour.data._http import Deadline


class _Redirect(http.server.BaseHTTPRequestHandler):
    """``/start`` sends the client to ``/drip``, which sends one byte of its status
    line every 0.1 s until the server closes: a read that never ends on its own."""

    def do_GET(self) -> None:
        if self.path == "/start":
            self.send_response(302)
            self.send_header("Location", "/drip")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        for byte in b"HTTP/1.1 200 OK\r\n" * 1000:
            if self.server.closing.is_set():  # type: ignore[attr-defined]
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.1)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    served = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    served.closing = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}"
    served.closing.set()  # type: ignore[attr-defined]
    served.shutdown()
    served.server_close()


def test_a_connection_that_opens_after_the_deadline_is_cut_as_it_opens(
    server, monkeypatch
):
    """The redirect's connection connects 1.5 s after the 0.3 s deadline (a slow
    connect): the cut found no socket to shut, so the drip would go on for 100 s."""
    connects = []
    opens = http.client.HTTPConnection.connect

    def slow_second_connect(self: http.client.HTTPConnection) -> None:
        connects.append(time.monotonic())
        if len(connects) == 2:
            time.sleep(1.5)
        opens(self)

    monkeypatch.setattr(http.client.HTTPConnection, "connect", slow_second_connect)
    outcome: list = []

    def fetch() -> None:
        with Deadline(0.3) as deadline:
            try:
                with deadline.open(server + "/start", timeout=5) as response:
                    response.read()
                outcome.append("read to the end")
            except (OSError, http.client.HTTPException) as err:
                outcome.append((deadline.expired, type(err).__name__))

    reader = threading.Thread(target=fetch, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "the redirect's connection outlived its deadline"
    assert len(connects) == 2
    (result,) = outcome
    assert result[0] is True, result  # failed because the deadline cut it


@pytest.fixture
def tls_drip():
    """A server that answers a TLS ClientHello with the header of a 16 KiB handshake
    record, then one byte of it every 0.1 s: a handshake that never ends on its own."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    closing = threading.Event()

    def drip(conn: socket.socket) -> None:
        with conn:
            conn.recv(4096)
            conn.sendall(b"\x16\x03\x03\x40\x00")
            while not closing.is_set():
                try:
                    conn.sendall(b"\x00")
                except OSError:
                    return
                time.sleep(0.1)

    def serve() -> None:
        while not closing.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}/"
    closing.set()
    listener.close()


def test_a_tls_handshake_is_cut_at_the_deadline(tls_drip):
    """TLS detaches the socket it wraps, so the connection's `sock` cannot be shut
    while the handshake reads: the cut shuts a duplicate of the socket, and the
    handshake ends at the 0.3 s deadline, not at the 5 s socket timeout."""
    outcome: list = []

    def fetch() -> None:
        start = time.monotonic()
        with Deadline(0.3) as deadline:
            try:
                deadline.open(tls_drip, timeout=5).read()
                outcome.append("read to the end")
            except (OSError, http.client.HTTPException):
                outcome.append(deadline.expired)
        outcome.append(time.monotonic() - start)

    reader = threading.Thread(target=fetch, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive()
    expired, took = outcome
    assert expired is True
    assert took < 3, took  # the socket timeout (5 s) would have ended it otherwise
