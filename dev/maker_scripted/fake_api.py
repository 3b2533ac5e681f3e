"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code client.

The script is a queue of replies per *agent*. Every ``POST /v1/messages`` is
classified: a side request the client makes on its own (a title, a summary, a
quota probe) is answered with a harmless default and leaves the script alone;
any other request belongs to an agent — ``"main"`` unless its system prompt
names another (by default a line ``maker-agent: NAME``; or pass
``agent_markers`` or a ``classifier``) — and is answered with the next item of
that agent's queue. An item is a :class:`Reply` (or plain ``str``), an
:class:`ApiError`, or a callable ``(RecordedRequest) -> Reply | str`` that can
read what the client sent. An empty queue answers ``default_text`` and the
request is recorded as ``default``, so a test can assert that the script was
consumed exactly::

    with FakeMessagesAPI() as api:   # agents/planner.md has the line "maker-agent: planner"
        api.script("main", Reply.tool("Agent", {...}), Reply.text("done"))
        api.script("planner", lambda req: Reply.text(plan_for(req.last_user_text)))
        run_claude("…", api=api, …)
        api.assert_done()

Every request — Messages calls and anything else (count_tokens, probes) — is
recorded in :attr:`FakeMessagesAPI.requests`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from maker_scripted.classify import (
    AGENT_MARKER,
    DEFAULT_SIDE_REQUESTS,
    MAIN,
    Classifier,
    SideRequest,
    marker_classifier,
    pattern_classifier,
)
from maker_scripted.recorded import RecordedRequest
from maker_scripted.replies import ApiError, Reply

__all__ = [
    "AGENT_MARKER",
    "DEFAULT_SIDE_REQUESTS",
    "MAIN",
    "Classifier",
    "FakeMessagesAPI",
    "ScriptItem",
    "SideRequest",
    "marker_classifier",
    "pattern_classifier",
]

ScriptItem = Reply | ApiError | str | Callable[[RecordedRequest], Reply | ApiError | str]
"""One queued answer: a reply, an error, plain text, or a callable that builds one."""


class FakeMessagesAPI:
    """A scripted Messages API server on ``127.0.0.1``; see the module docstring.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        *,
        agent_markers: Mapping[str, str] | None = None,
        classifier: Classifier | None = None,
        side_requests: Iterable[SideRequest] = DEFAULT_SIDE_REQUESTS,
        default_text: str = "(fake API: the script has no reply left)",
        on_request: Callable[[RecordedRequest], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """``on_request`` is called with each Messages request once its reply is
        chosen (``request.reply``, ``request.agent`` set), e.g. to narrate a demo."""
        if agent_markers and classifier:
            raise ValueError("pass agent_markers or classifier, not both")
        if classifier is None:
            classifier = (marker_classifier(agent_markers) if agent_markers
                          else pattern_classifier(AGENT_MARKER))
        self.classifier = classifier
        self.side_requests = tuple(side_requests)
        self.default_text = default_text
        self.on_request = on_request
        self._address = (host, port)
        self._queues: dict[str, deque[ScriptItem]] = {}
        # agent -> seconds its request waits for a script when its queue is empty (a
        # process the script cannot see start, e.g. one a hook starts: scripted as soon
        # as the script hears of it, which may be a moment after its first request)
        self.grace: dict[str, float] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script -------------------------------------------------------------

    def script(self, agent: str, *items: ScriptItem) -> FakeMessagesAPI:
        """Queue ``items`` as the next answers to ``agent``'s requests; returns ``self``."""
        with self._lock:
            self._queues.setdefault(agent, deque()).extend(items)
        return self

    def remaining(self) -> dict[str, int]:
        """How many queued items each agent has not consumed (agents with none left omitted)."""
        with self._lock:
            return {agent: len(q) for agent, q in self._queues.items() if q}

    # -- what was received --------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def unscripted(self) -> list[RecordedRequest]:
        """Requests that found their agent's queue empty and got ``default_text``."""
        return [r for r in self.requests if r.outcome == "default"]

    def assert_done(self) -> None:
        """Raise ``AssertionError`` unless the script was consumed exactly.

        Fails if a scripted callable raised (its exception is chained), if a
        queue still holds items, or if a request found its queue empty.
        """
        errors = [r for r in self.requests if r.outcome == "error"]
        if errors:
            first = errors[0]
            raise AssertionError(
                f"a scripted reply for agent {first.agent!r} raised: {first.error!r}"
            ) from first.error
        problems = [f"agent {a!r} left {n} scripted repl{'y' if n == 1 else 'ies'} unused"
                    for a, n in self.remaining().items()]
        problems += [f"request #{r.index} from agent {r.agent!r} had no scripted reply "
                     f"(last user text: {r.last_user_text[-200:]!r})" for r in self.unscripted]
        if problems:
            raise AssertionError("script not consumed exactly:\n- " + "\n- ".join(problems))

    # -- server lifecycle ---------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``ANTHROPIC_BASE_URL``."""
        host, port = self.address
        return f"http://{host}:{port}"

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> FakeMessagesAPI:
        """Bind a free port and serve in a background thread; returns ``self``."""
        if self._server is not None:
            raise RuntimeError("FakeMessagesAPI is already started")
        server = ThreadingHTTPServer(self._address, _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05},
            name="fake-messages-api", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket. Safe to call twice."""
        server, thread = self._server, self._thread
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- answering ----------------------------------------------------------

    def _record(self, method: str, path: str, headers: dict[str, str],
                body: Any) -> RecordedRequest:
        with self._lock:
            request = RecordedRequest(len(self._requests), method, path, headers, body)
            self._requests.append(request)
        return request

    def _answer(self, request: RecordedRequest) -> Reply | ApiError:
        """Decide the reply to a Messages request and note how it was chosen."""
        try:
            request.reply = self._choose(request)
            if self.on_request is not None:
                self.on_request(request)
        except Exception as exc:  # a bug in the script or classifier: see assert_done
            request.outcome, request.error = "error", exc
            request.reply = ApiError(500, "api_error", f"fake API: the script raised {exc!r}")
        return request.reply

    def _choose(self, request: RecordedRequest) -> Reply | ApiError:
        request.agent = agent = self.classifier(request)
        for side in self.side_requests:
            if side.matches(request):
                request.outcome, request.side_kind = "side", side.name
                return side.answer(request)
        deadline = time.monotonic() + self.grace.get(agent, 0.0)
        while True:
            with self._lock:
                queue = self._queues.get(agent)
                item = queue.popleft() if queue else None
            if item is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if item is None:
            request.outcome = "default"
            return Reply.text(self.default_text)
        request.outcome = "scripted"
        produced = item(request) if callable(item) else item
        return Reply.text(produced) if isinstance(produced, str) else produced


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = api

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeMessagesAPI
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stalls mid-request must not pin a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # stdlib name
        pass

    def do_POST(self) -> None:
        self._handle("POST")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        # One request per connection: no idle keep-alive threads left behind at stop().
        self.close_connection = True
        body = self._read_body()
        request = self.fake._record(method, self.path, dict(self.headers.items()), body)
        route = self.path.split("?")[0]
        try:
            if method == "POST" and route == "/v1/messages":
                self._messages(request)
            elif method == "POST" and route == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": _estimate_tokens(body)})
            elif method in ("GET", "HEAD"):
                self._send_json(200, {})
            else:
                self._send_json(404, ApiError(404, "not_found_error",
                                              f"fake API: no route {method} {route}").to_json())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (e.g. killed on timeout); nothing to tell it

    def _messages(self, request: RecordedRequest) -> None:
        if not isinstance(request.body, dict):
            self._send_json(400, ApiError(400, "invalid_request_error",
                                          "body is not a JSON object").to_json())
            return
        reply = self.fake._answer(request)
        if isinstance(reply, ApiError):
            self._send_json(reply.status, reply.to_json())
            return
        model = str(request.body.get("model", "claude-fake"))
        tokens = _estimate_tokens(request.body)
        if not request.body.get("stream"):
            self._send_json(200, reply.to_message(model, tokens))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        safeguards = isinstance(request.body.get("safeguards"), list)
        for event, data in reply.sse_events(model, tokens, safeguards=safeguards):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def _estimate_tokens(body: Any) -> int:
    # Roughly four characters a token: enough for the client's cost and context display.
    return max(1, len(json.dumps(body)) // 4) if body is not None else 1
