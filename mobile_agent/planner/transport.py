"""One OpenAI-compatible chat endpoint, asked with bounded retries and read with bounds.

``ChatEndpoint.complete(messages, purpose=...)`` sends one chat completion through the
official ``openai`` client (its own retries off): exponential backoff with jitter on
408/409/425/429, 5xx, timeouts and connection errors, ``Retry-After`` honoured up to
``backoff_max_s``. When they run out: ``PlannerUnreachableError`` (no answer) or
``PlannerError`` (an error status), with ``status_code`` and ``attempts``; an answer with
no usable message, or one over ``max_body_bytes`` (not read on, not retried), is a
``PlannerResponseError``. The reply text is cut to ``max_reply_bytes`` (``cap_reply``).
Every error names the endpoint without its credentials (``shown_url``).

May import: openai and its httpx, the standard library, ``mobile_agent.errors``,
``mobile_agent.settings`` and ``mobile_agent.urls``.
"""

from __future__ import annotations

import functools
import random
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import openai

try:  # the HTTP library under openai's client: httpx2 from openai 3.x, httpx before
    import httpx2 as httpx
except ModuleNotFoundError:  # pragma: no cover - older openai
    import httpx  # type: ignore[no-redef]

from mobile_agent.errors import PlannerError, PlannerResponseError, PlannerUnreachableError
from mobile_agent.settings import PlannerSettings
from mobile_agent.urls import shown_url

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = [
    "OPENAI_BASE_URL",
    "BoundedTransport",
    "ChatAnswer",
    "ChatEndpoint",
    "ReplyTooLargeError",
    "cap_reply",
    "error_message",
    "max_body_bytes",
    "shared_client",
    "shown_url",
]

_RETRY_STATUS = frozenset({408, 409, 425, 429})
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ChatAnswer:
    """One chat completion's message: its text (capped), tool calls and token counts."""

    text: str
    tool_calls: tuple[dict[str, Any], ...]
    prompt_tokens: int
    completion_tokens: int


class ChatEndpoint:
    """``client`` (an ``openai.OpenAI``) asked the way ``settings`` say. Thread-safe."""

    def __init__(
        self,
        settings: PlannerSettings,
        client: openai.OpenAI,
        name: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.name = name  # the endpoint as errors show it
        self._sleep = sleep
        self._rng = rng or random.Random()

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        purpose: str,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] = "auto",
        response_format: dict[str, Any] | None = None,
    ) -> ChatAnswer:
        """The endpoint's answer to ``messages``; ``purpose`` (plan, choose…) names the
        call in errors. ``tool_choice`` (with ``tools``) and ``response_format`` (JSON mode)
        are sent as the OpenAI API names them (``mobile_agent.testing`` extraction uses both)."""
        s = self.settings
        extra: dict[str, Any] = {"tools": tools, "tool_choice": tool_choice} if tools else {}
        if response_format is not None:
            extra["response_format"] = response_format
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self.client.chat.completions.create(
                    model=s.model,
                    # our messages are JSON as the chat API names it; the SDK's TypedDicts are the
                    # same shapes, which a dict[str, Any] built by the dialects cannot be checked as
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    temperature=s.temperature,
                    max_tokens=s.max_tokens,
                    **extra,
                )
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                if attempts > s.max_retries:
                    kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "could not be reached"
                    raise PlannerUnreachableError(
                        f"the planner endpoint {self.name} {kind} "
                        f"({attempts} attempt{'s' if attempts != 1 else ''}, {purpose})",
                        attempts=attempts,
                        purpose=purpose,
                    ) from exc
                self._sleep(self._backoff(attempts, None))
                continue
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status in _RETRY_STATUS or status >= 500
                if not retryable or attempts > s.max_retries:
                    raise PlannerError(
                        f"the planner endpoint {self.name} answered HTTP {status}: {error_message(exc)} "
                        f"({attempts} attempt{'s' if attempts != 1 else ''}, {purpose})",
                        status_code=status,
                        attempts=attempts,
                        purpose=purpose,
                    ) from exc
                self._sleep(self._backoff(attempts, exc.response.headers.get("retry-after")))
                continue
            except ReplyTooLargeError as exc:  # read no further: not retried, it would answer the same
                raise PlannerResponseError(
                    f"the planner endpoint {self.name} answered over {exc.limit} bytes ({purpose}); "
                    "planner.max_tokens bounds what a model writes",
                    attempts=attempts,
                    purpose=purpose,
                ) from exc
            except (openai.APIResponseValidationError, ValueError) as exc:  # ValueError: a body that is not JSON
                raise PlannerResponseError(
                    f"the planner endpoint answered something that is not a chat completion ({purpose})",
                    status_code=getattr(exc, "status_code", None),
                    attempts=attempts,
                    purpose=purpose,
                ) from exc
            return self._read(response, attempts, purpose)

    def _read(self, response: Any, attempts: int, purpose: str) -> ChatAnswer:
        choices = getattr(response, "choices", None)
        if not choices:
            raise PlannerResponseError(
                f"the planner endpoint answered with no choices ({purpose})", attempts=attempts, purpose=purpose
            )
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        calls = []
        for call in getattr(message, "tool_calls", None) or ():
            function = getattr(call, "function", None)
            if function is not None:
                calls.append({"function": {"name": str(getattr(function, "name", "") or ""),
                                           "arguments": str(getattr(function, "arguments", "") or "")}})  # fmt: skip
        if text is None and calls:
            text = ""
        if not isinstance(text, str):
            refusal = getattr(message, "refusal", None)
            raise PlannerResponseError(
                f"the planner endpoint answered with no text ({purpose})"
                + (f": refusal {refusal!r}" if refusal else ""),
                attempts=attempts,
                purpose=purpose,
            )
        usage = getattr(response, "usage", None)
        return ChatAnswer(
            cap_reply(text, self.settings.max_reply_bytes),
            tuple(calls),
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        s = self.settings
        if retry_after:
            try:
                return float(min(s.backoff_max_s, max(0.0, float(retry_after))))
            except ValueError:
                pass  # an HTTP date: use our own schedule
        ceiling = min(s.backoff_max_s, s.backoff_base_s * (2 ** (attempt - 1)))
        # "Equal jitter": at least half the ceiling, so retries never bunch at zero.
        return float(ceiling / 2 + self._rng.uniform(0, ceiling / 2))


def max_body_bytes(settings: PlannerSettings) -> int:
    """The most of one HTTP answer the client reads: far above any reply within max_tokens
    (whose text is then cut to max_reply_bytes), low enough that an endpoint streaming
    gigabytes cannot fill the memory."""
    return max(32 << 20, 64 * settings.max_reply_bytes)


class ReplyTooLargeError(openai.OpenAIError):
    """An HTTP answer over ``max_body_bytes``: the reading stopped there. An ``OpenAIError``,
    which the openai client passes on as it is (neither wrapped nor retried)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer over {limit} bytes")
        self.limit = limit


class _BoundedBody(httpx.SyncByteStream):
    def __init__(self, stream: Any, limit: int) -> None:
        self._stream, self._limit = stream, limit

    def __iter__(self) -> Any:
        total = 0
        for chunk in self._stream:
            total += len(chunk)
            if total > self._limit:
                raise ReplyTooLargeError(self._limit)
            yield chunk

    def close(self) -> None:
        self._stream.close()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The one TLS context of this process (httpx's defaults: the CA bundle, SSL_CERT_FILE).
    Building one reads the whole CA bundle, about 16 ms of CPU; a farm host makes a planner
    per run, and an ``SSLContext`` is safe to share between connections and threads."""
    return httpx.create_ssl_context()


class BoundedTransport(httpx.HTTPTransport):
    """httpx's transport, with every answer's body read up to ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(verify=_ssl_context())
        self._limit = limit

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_BoundedBody(response.stream, self._limit),
            extensions=response.extensions,
            request=request,
        )


TRUNCATED_MARK = "[reply truncated by mobile-agent: {n} more bytes]"


def cap_reply(text: str, max_bytes: int) -> str:
    """``text`` within ``max_bytes`` of UTF-8, cut on a character boundary, the cut said at its end."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    mark = TRUNCATED_MARK.format(n=len(data) - max_bytes)
    kept = data[: max(0, max_bytes - len(mark) - 1)].decode("utf-8", "ignore")
    return f"{kept}\n{TRUNCATED_MARK.format(n=len(data) - len(kept.encode('utf-8', 'surrogatepass')))}"


def error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        for holder in (inner, body):
            message = holder.get("message") if isinstance(holder, dict) else None
            if isinstance(message, str):
                return message[:300]
    return str(exc.message)[:300]


_CLIENTS: OrderedDict[tuple[str, str, float, int], openai.OpenAI] = OrderedDict()
_CLIENTS_LOCK = threading.Lock()
_CLIENTS_MAX = 16  # endpoints a long-lived service keeps connections to (tasks may name their own)


def shared_client(settings: PlannerSettings) -> openai.OpenAI:
    """The process's ``openai.OpenAI`` for this endpoint. A client is thread-safe and keeps
    its connections alive: runs of a service that share one skip a TCP and TLS handshake
    each (one per run before), and the client is built once, not for every run. One per
    (URL, key, timeout, body limit); the least recently used beyond ``_CLIENTS_MAX`` is let
    go (its runs keep it until they end)."""
    key = (settings.base_url or OPENAI_BASE_URL, settings.api_key.get_secret_value(), float(settings.timeout_s),
           max_body_bytes(settings))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is not None:
            _CLIENTS.move_to_end(key)
            return client
        client = openai.OpenAI(
            # Explicit, so that the openai library does not read OPENAI_BASE_URL itself:
            # only mobile_agent.settings reads the environment.
            base_url=key[0],
            # Local servers (Ollama, vLLM) accept any key; the client insists on one.
            api_key=key[1] or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0,
            http_client=openai.DefaultHttpxClient(transport=BoundedTransport(key[3])),
        )
        _CLIENTS[key] = client
        while len(_CLIENTS) > _CLIENTS_MAX:
            _CLIENTS.popitem(last=False)
        return client
