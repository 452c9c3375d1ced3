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
        self._connections: list[http.client.HTTPConnection] = []
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

    def __enter__(self) -> Deadline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def _keep(self, cls: type[Connection]) -> Callable[..., Connection]:
        def make(*args: Any, **kwargs: Any) -> Connection:
            connection = cls(*args, **kwargs)
            opens = connection.connect

            def connect() -> None:  # its socket, shut at once if the time is up
                opens()
                with self._lock:
                    if self.expired:
                        _shut(connection)

            connection.connect = connect  # type: ignore[method-assign]
            with self._lock:
                self._connections.append(connection)
            return connection

        return make

    def _cut(self) -> None:
        with self._lock:
            self.expired = True
            for connection in self._connections:
                _shut(connection)


def _shut(connection: http.client.HTTPConnection) -> None:
    """Shut `connection`'s socket, if it has one: a thread blocked in recv() wakes and
    sees the end of the stream."""
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)


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
