"""An HTTP(S) GET that cannot outlive its deadline, however slowly the server answers.

A socket timeout bounds each wait for a byte, not the whole transfer: a server that
sends one header byte every few seconds keeps `urlopen` busy for ever. `Deadline`
opens the URL through urllib (redirects, proxies and HTTPS as usual) but keeps the
connections it makes, and shuts their sockets down when the time is up; a connection
whose socket opens after that (a redirect's, a slow connect) is shut as it opens.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

Connection = TypeVar("Connection", bound=http.client.HTTPConnection)
# Deadline._keep: a connection class -> the same, its instances kept for the cut.
Keep = Callable[[type[http.client.HTTPConnection]], Callable[..., Any]]


class Deadline:
    """Opens URLs whose connections are cut `seconds` after the first `open`."""

    def __init__(self, seconds: float):
        self.seconds, self.expired = seconds, False
        # a duplicate of each socket opened: TLS detaches the socket it wraps, so the
        # connection's own `sock` cannot be shut during the handshake; a duplicate can
        # (shutdown acts on the socket, not on one descriptor of it)
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()  # the cut, and a socket opening, one at a time
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def open(self, url: str, timeout: float) -> http.client.HTTPResponse:
        """`urllib.request.urlopen(url, timeout=timeout)`, cut at the deadline."""
        opener = urllib.request.build_opener(_HTTP(self._keep), _HTTPS(self._keep))
        if not self._timer.is_alive():
            self._timer.start()
        return opener.open(url, timeout=timeout)

    def cancel(self) -> None:
        """Stop the clock (the transfer is over)."""
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()  # the duplicates only: the connections close their own
            self._sockets.clear()

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def _keep(self, cls: type[Connection]) -> Callable[..., Connection]:
        def make(*args: Any, **kwargs: Any) -> Connection:
            connection = cls(*args, **kwargs)
            creates = connection._create_connection  # type: ignore[attr-defined]

            def create(*how: Any, **options: Any) -> socket.socket:
                # the socket as it opens, before a proxy's CONNECT or a TLS handshake
                # reads from it: shut at once if the time is up, else kept for the cut
                sock = creates(*how, **options)
                with self._lock:
                    if self.expired:
                        _shut(sock)
                    else:
                        self._sockets.append(sock.dup())
                return sock

            connection._create_connection = create  # type: ignore[attr-defined]
            return connection

        return make

    def _cut(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    """Shut `sock` down: a thread blocked in recv() on it (or on a descriptor of the
    same socket) wakes and sees the end of the stream."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, keep: Keep) -> None:
        super().__init__()
        self._make = keep(http.client.HTTPConnection)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._make, req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, keep: Keep) -> None:
        super().__init__()
        self._make = keep(http.client.HTTPSConnection)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        # HTTPSHandler keeps its SSL context as `_context` (not in typeshed's stubs).
        return self.do_open(self._make, req, context=getattr(self, "_context", None))
