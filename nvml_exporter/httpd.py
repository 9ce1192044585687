"""A small HTTP/1.1 server that holds slow and hostile clients: bounded time, connections, threads.

More: docs/exporter.md, "HTTP under slow and hostile clients".
"""

from __future__ import annotations

import asyncio
import logging
import queue
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import h11

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024
"""Connections the kernel queues while the cap is reached (further ones are refused)."""


@dataclass(frozen=True)
class HttpLimits:
    """Time, size and concurrency bounds of :class:`HttpServer`; times in seconds.

    Attributes:
        header_timeout_s: time for a whole request (line, headers, body) to arrive.
        idle_timeout_s: time a keep-alive connection may wait for its next request.
        write_timeout_s: time for the client to take a response.
        max_connections: connections open at once (≥ 1).
        workers: threads running blocking handlers (≥ 1).
        max_header_bytes: size of a request line plus headers, bytes.
        max_body_bytes: size of a request body, bytes.
    """

    header_timeout_s: float = 10.0
    idle_timeout_s: float = 120.0
    write_timeout_s: float = 30.0
    max_connections: int = 512
    workers: int = 4
    max_header_bytes: int = 16 * 1024
    max_body_bytes: int = 64 * 1024


@dataclass(frozen=True)
class Request:
    """One request, as handed to a handler.

    Attributes:
        method: ``GET``, ``HEAD``, ...
        path: the target's path, without the query.
        headers: header names in lower case -> value; a repeated header's values joined
            by ``", "`` in order, as one list (RFC 9110 §5.3).
        received_at: ``time.monotonic()`` seconds when the request was complete.
    """

    method: str
    path: str
    headers: dict[str, str]
    received_at: float


@dataclass(frozen=True)
class Response:
    """One response: status, body bytes and extra headers (``Content-Length`` is added)."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()


Handler = Callable[[Request], Response]


@dataclass(frozen=True)
class Route:
    """A handler and whether it may block (then it runs in a worker thread)."""

    handler: Handler
    blocking: bool = False


class ClientGone(Exception):
    """The client closed or reset the connection, or was too slow; ends it quietly."""


@dataclass(eq=False)
class _Connection:
    writer: asyncio.StreamWriter
    peer: str
    idle: bool = False  # between requests, waiting for the next one
    idle_since: float = field(default_factory=time.monotonic)


class HttpServer:
    """The server: bind at construction, serve in a thread after :meth:`start`.

    Args:
        host: address to bind (``""``: all IPv4 interfaces; an IPv6 literal binds IPv6).
        port: TCP port; 0 picks a free one (see :attr:`port`).
        routes: path -> :class:`Route`; other paths answer 404.
        limits: the bounds (see the module docstring).

    Raises:
        OSError: the address cannot be bound.
    """

    def __init__(
        self, host: str, port: int, routes: dict[str, Route], limits: HttpLimits | None = None
    ) -> None:
        self.routes = routes
        self.limits = limits or HttpLimits()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
        self._sock.setblocking(False)
        self._workers = _Workers(self.limits.workers)
        self._loop = asyncio.new_event_loop()
        self._loop.set_exception_handler(_loop_exception)
        self._thread: threading.Thread | None = None
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots: asyncio.Semaphore | None = None
        self._accepting: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The bound TCP port."""
        return int(self._sock.getsockname()[1])

    @property
    def open_connections(self) -> int:
        """Connections open now (accepted and not yet closed)."""
        return len(self._connections)

    def start(self) -> None:
        """Serve in a daemon thread named ``http``."""
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._slots = asyncio.Semaphore(self.limits.max_connections)
            self._accepting = self._loop.create_task(self._accept())
            self._loop.call_soon(ready.set)
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="http", daemon=True)
        self._thread.start()
        ready.wait()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop accepting, drop every connection, end the thread; idempotent.

        Worker threads still inside a handler (a hung NVML call) are left to finish alone.
        """
        if self._thread is not None and self._thread.is_alive():
            done = asyncio.run_coroutine_threadsafe(self._close_all(), self._loop)
            try:
                done.result(timeout_s)
            except Exception as exc:
                log.warning("HTTP server did not close cleanly: %r", exc)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout_s)
            if not self._thread.is_alive():
                self._loop.close()
        self._sock.close()
        self._workers.stop()

    async def _close_all(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
        self._sock.close()
        for conn in list(self._connections):
            conn.writer.transport.abort()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- accepting ---------------------------------------------------------------------------

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._slots is not None
        while True:
            try:
                sock, address = await loop.sock_accept(self._sock)
            except OSError as exc:  # e.g. EMFILE: out of file descriptors
                log.warning("accepting a connection failed: %s; retrying in 0.1 s", exc)
                await asyncio.sleep(0.1)
                continue
            if self._slots.locked():
                self._close_longest_idle()
            await self._slots.acquire()  # the accepted client waits here while the cap holds
            task = loop.create_task(self._serve(sock, _peer(address)))
            self._tasks.add(task)  # a reference, so the task is not garbage-collected
            task.add_done_callback(self._tasks.discard)

    def _close_longest_idle(self) -> None:
        idle = [c for c in self._connections if c.idle]
        if idle:
            oldest = min(idle, key=lambda c: c.idle_since)
            log.debug("connection cap reached: closing idle connection from %s", oldest.peer)
            oldest.writer.transport.abort()

    # -- one connection ----------------------------------------------------------------------

    async def _serve(self, sock: socket.socket, peer: str) -> None:
        assert self._slots is not None
        conn: _Connection | None = None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader, writer = await asyncio.open_connection(sock=sock)
            # drain() then returns only once the kernel has every byte, so closing the
            # connection right after a response never cuts it short
            writer.transport.set_write_buffer_limits(high=0)
            conn = _Connection(writer, peer)
            self._connections.add(conn)
            await self._requests(conn, reader)
        except ClientGone as exc:
            log.debug("connection from %s ended: %s", peer, exc)
        except (ConnectionError, TimeoutError, OSError) as exc:
            log.debug("connection from %s ended: %s", peer, _describe(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug: one line (traceback only at debug level)
            log.error(
                "HTTP connection from %s failed: %r",
                peer,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
        finally:
            if conn is not None:
                self._connections.discard(conn)
                conn.writer.transport.abort()
            else:
                sock.close()
            self._slots.release()

    async def _requests(self, conn: _Connection, reader: asyncio.StreamReader) -> None:
        limits = self.limits
        h = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        deadline = time.monotonic() + limits.header_timeout_s  # first request: from accept
        while True:
            try:
                request = await self._read_request(h, reader, conn, deadline)
            except h11.RemoteProtocolError as exc:
                status = exc.error_status_hint if 400 <= exc.error_status_hint < 500 else 400
                if h.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                    body = f"bad request: {exc}\n".encode()
                    await self._write(h, conn, Response(status, body), close=True)
                raise ClientGone(f"protocol error ({status}): {exc}") from None
            if request is None:
                return  # closed by the client between requests, or idle for too long
            response = await self._respond(request)
            await self._write(h, conn, response, head=request.method == "HEAD")
            if h.our_state is not h11.DONE or h.their_state is not h11.DONE:
                return  # either side asked to close (HTTP/1.0, Connection: close)
            h.start_next_cycle()
            conn.idle, conn.idle_since = True, time.monotonic()
            deadline = 0.0  # set from the next request's first byte

    async def _read_request(
        self,
        h: h11.Connection,
        reader: asyncio.StreamReader,
        conn: _Connection,
        deadline: float,
    ) -> Request | None:
        """Read one request and its body; None when the connection ends between requests."""
        limits = self.limits
        request: h11.Request | None = None
        body_bytes = 0
        while True:
            event = h.next_event()
            if event is h11.NEED_DATA:
                # Until the headers are complete, never hand h11 more than the header limit
                # plus one byte, so that its incomplete-event limit catches an oversized head.
                size = 65536 if request is not None else limits.max_header_bytes + 1
                if not deadline:  # keep-alive: waiting for a first byte
                    data = await _within(reader.read(size), limits.idle_timeout_s, "idle")
                    if not data:
                        return None
                    conn.idle = False
                    deadline = time.monotonic() + limits.header_timeout_s
                else:
                    left = deadline - time.monotonic()
                    data = await _within(reader.read(size), left, "request")
                    if not data and request is None:
                        if h.trailing_data[0]:
                            raise ClientGone("closed before finishing its request")
                        return None  # opened and closed without a request
                h.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body_bytes += len(event.data)
                if body_bytes > limits.max_body_bytes:
                    raise h11.RemoteProtocolError("request body too large", 413)
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return _request(request)
            elif isinstance(event, h11.ConnectionClosed):
                return None
            else:  # pragma: no cover - h11 PAUSED only after a complete request
                raise ClientGone(f"unexpected HTTP event {event!r}")

    async def _respond(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return Response(405, b"method not allowed\n", headers=(("Allow", "GET, HEAD"),))
        route = self.routes.get(request.path)
        if route is None:
            return Response(404, b"not found\n")
        try:
            if not route.blocking:
                return route.handler(request)
            return await asyncio.wrap_future(self._workers.submit(route.handler, request))
        except Exception as exc:  # a bug in a handler: an answer all the same, and one line
            log.error(
                "handler of %s failed: %r",
                request.path,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            return Response(500, b"internal error\n")

    async def _write(
        self,
        h: h11.Connection,
        conn: _Connection,
        response: Response,
        *,
        head: bool = False,
        close: bool = False,
    ) -> None:
        headers = [
            ("Content-Type", response.content_type),
            ("Content-Length", str(len(response.body))),
            *response.headers,
        ]
        if close:
            headers.append(("Connection", "close"))
        data = h.send(h11.Response(status_code=response.status, headers=headers)) or b""
        if not head:
            data += h.send(h11.Data(data=response.body)) or b""
        data += h.send(h11.EndOfMessage()) or b""
        conn.writer.write(data)
        await _within(conn.writer.drain(), self.limits.write_timeout_s, "response write")


async def _within(
    awaitable: Awaitable[bytes] | Awaitable[None], seconds: float, what: str
) -> bytes:
    """Await ``awaitable`` for at most ``seconds``; :class:`ClientGone` when it takes longer."""
    try:
        async with asyncio.timeout(max(seconds, 0.0)):
            result = await awaitable
    except TimeoutError:
        raise ClientGone(f"{what} timeout ({seconds:.1f} s)") from None
    return result if isinstance(result, bytes) else b""


class _Workers:
    """A fixed pool of daemon threads running blocking handlers.

    Daemon threads, unlike ``concurrent.futures``' workers, never hold the process at exit
    when a handler is stuck in a hung NVML call.
    """

    def __init__(self, count: int) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Response], Handler, Request] | None] = (
            queue.SimpleQueue()
        )
        self._threads = [
            threading.Thread(target=self._run, name=f"http-worker-{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, handler: Handler, request: Request) -> Future[Response]:
        """Run ``handler(request)`` in a worker; its result or exception lands in the future."""
        future: Future[Response] = Future()
        self._jobs.put((future, handler, request))
        return future

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, handler, request = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(handler(request))
            except BaseException as exc:
                future.set_exception(exc)

    def stop(self) -> None:
        """Let idle workers end; a busy one ends after its handler returns."""
        for _ in self._threads:
            self._jobs.put(None)


def _request(event: h11.Request) -> Request:
    target = event.target.decode("latin-1")
    headers: dict[str, str] = {}
    for raw_name, raw_value in event.headers:  # h11 gives names in lower case
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return Request(
        method=event.method.decode("latin-1"),
        path=target.split("?", 1)[0],
        headers=headers,
        received_at=time.monotonic(),
    )


def _peer(address: object) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host, port = address[0], address[1]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"
    return str(address)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """asyncio's last-resort reports, as one line each: debug for a client's disconnect."""
    exc = context.get("exception")
    if isinstance(exc, ConnectionError | TimeoutError):
        log.debug("HTTP: %s: %s", context.get("message"), _describe(exc))
    else:
        log.error("HTTP: %s: %r", context.get("message"), exc)


def gzip_acceptable(accept_encoding: str | None) -> bool:
    """Whether to gzip a response, from the request's ``Accept-Encoding`` (RFC 9110 §12.5.3).

    ``gzip`` (or ``x-gzip``) is acceptable when listed with a q-value above 0, or, when not
    listed, when ``*`` is listed with a q-value above 0; ``q=0`` means "not acceptable".
    When ``identity`` is preferred (a higher q-value than gzip, directly or through ``*``) the
    body is sent plain; a tie goes to gzip. A missing or empty header means no content coding;
    an element with a malformed q-value is ignored. When nothing is acceptable the body is
    sent plain (RFC 9110 lets a server disregard the header rather than answer 406).

    Args:
        accept_encoding: the header value, or None when absent.

    Returns:
        True to send ``Content-Encoding: gzip``.
    """
    if not accept_encoding:
        return False
    q: dict[str, float] = {}
    for element in accept_encoding.split(","):
        coding, _, params = element.strip().partition(";")
        coding = coding.strip().lower()
        if not coding:
            continue
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value.strip())
                except ValueError:
                    weight = -1.0
        if not 0.0 <= weight <= 1.0:
            continue  # malformed: ignore this element
        q[coding] = max(weight, q.get(coding, -1.0))
    gzip_q = q.get("gzip", q.get("x-gzip", q.get("*", 0.0)))
    # identity is acceptable unless excluded; when it is not named at all it comes after every
    # coding the client did name (the smallest q-value a client can send is 0.001)
    identity_q = q.get("identity", q.get("*", 0.0005))
    return gzip_q > 0 and gzip_q >= identity_q
