"""Any OpenAI-compatible server (OpenAI, Ollama, vLLM, LM Studio): replies streamed token by token.

Our own AG2 model client calls the server through the `openai` SDK, so the API key stays inside the provider
(never in the llm_config AG2 keeps and logs), every call gets its own sampling, and the live panel, usage and
time to first token work as they do for the local model.
"""

from __future__ import annotations

import os
import queue
import threading
from contextlib import contextmanager, suppress
from typing import Any, Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from agents.loop.budget import beats_only, can_stop
from agents.loop.errors import CodeduetError, ModelUnavailable
from agents.loop.protocols import TokenSink, Usage
from agents.models.response import InProcessClientMixin, InProcessProviderMixin, StreamedReply, clean_messages
from agents.record.paths import dotenv_files

NO_KEY = "not-needed"
INCLUDE_USAGE = {"include_usage": True}


class OpenAIConfig(BaseModel):
    """An OpenAI-compatible model entry."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "openai"
    """Always `openai`."""
    model: str
    """Model name as the server knows it, e.g. gpt-4o-mini or qwen2.5-coder:1.5b."""
    base_url: str | None = None
    """Server URL ending in /v1; default: OpenAI's."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable (or .env key) holding the API key; never the key itself."""
    api_key_optional: bool = False
    """True for local servers that need no key (Ollama, vLLM, LM Studio)."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens per reply; default: the server's."""
    timeout: int = Field(default=120, ge=1)
    """Seconds to wait for one reply."""


class StreamBroken(Exception):
    """The connection ended while a reply streamed; `text` is what had arrived."""

    def __init__(self, text: str, cause: BaseException):
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.text = text


def is_transport_error(exc: BaseException) -> bool:
    """A dropped or broken connection (httpx's transport errors, or the SDK's wrapper of them)."""
    import httpx
    import openai

    return isinstance(exc, (httpx.TransportError, openai.APIConnectionError))


class NotOpened(Exception):
    """The request failed before its stream opened (read by `beating`'s worker): stream_chat raises `error` as the
    SDK raised it, as it does without the worker, never as a stream broken mid-reply."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


BEAT_S = 0.5
"""While a server sends nothing (it evaluates the prompt), the reply's sink gets a beat this often."""


def beating(open_stream: Callable[[], Any], beat: TokenSink) -> Iterator[Any]:
    """The chunks of open_stream(), read by a worker thread, with beat("") every BEAT_S while none arrives: a time
    budget's guard raises there, during the server's prompt evaluation too, and the stream is then closed."""
    chunks: queue.Queue[tuple[str, Any]] = queue.Queue()
    opened: list[Any] = []

    def read() -> None:
        try:
            opened.append(open_stream())
        except BaseException as exc:  # the request itself failed (no server there, a refusal)
            chunks.put(("unopened", exc))
            return
        try:
            for chunk in opened[0]:
                chunks.put(("chunk", chunk))
            chunks.put(("end", None))
        except BaseException as exc:  # handed to the caller's thread, which raises it
            chunks.put(("error", exc))

    worker = threading.Thread(target=read, name="codeduet-stream", daemon=True)
    worker.start()
    try:
        while True:
            try:
                kind, value = chunks.get(timeout=BEAT_S)
            except queue.Empty:
                beat("")
                continue
            if kind == "end":
                return
            if kind == "error":
                raise value
            if kind == "unopened":
                raise NotOpened(value)
            yield value
    finally:
        if worker.is_alive() and opened:  # stopped early (the budget): the worker's read ends with the stream
            with suppress(Exception):
                opened[0].close()


def stream_chat(client: Any, model: str, messages: list[dict[str, Any]], *, usage_in_stream: bool = True,
                on_token: TokenSink | None = None, **params: Any) -> tuple[str, Usage]:
    """One streamed chat completion: text to on_token as it arrives; usage as the server counts it (asked for with
    stream_options) or, when it sends none, the content chunks counted (one token each on these servers)."""
    extra = {"stream_options": INCLUDE_USAGE} if usage_in_stream else {}
    reply = StreamedReply(on_token)

    def open_stream() -> Any:
        return client.chat.completions.create(model=model, messages=clean_messages(messages), stream=True,
                                              **extra, **params)

    # a failed request is raised here; a worker thread reads the stream only when a budget's guard may stop it
    stream = beating(open_stream, on_token) if on_token is not None and can_stop(on_token) else open_stream()
    finish = server_usage = None
    try:
        for chunk in stream:
            server_usage = getattr(chunk, "usage", None) or server_usage
            for choice in chunk.choices or []:
                finish = choice.finish_reason or finish
                reply.add(choice.delta.content if choice.delta else None)
    except NotOpened as failed:
        raise failed.error from None
    except Exception as exc:
        if is_transport_error(exc):
            raise StreamBroken(reply.text, exc) from exc
        raise
    info: dict[str, Any] = {"finish_reason": finish, "streamed": True,
                            "usage_from": "server" if server_usage else "counted"}
    for key in ("temperature", "seed"):
        if key in params:
            info[key] = params[key]
    prompt = getattr(server_usage, "prompt_tokens", None) if server_usage else None
    completion = getattr(server_usage, "completion_tokens", None) if server_usage else len(reply.parts)
    return reply.text, reply.usage(prompt_tokens=prompt, completion_tokens=completion, extra=info)


def stream_choices(client: Any, model: str, messages: list[dict[str, Any]], n: int,
                   **params: Any) -> list[tuple[str, Usage]]:
    """One streamed request for `n` choices (the server's `n`); the texts by choice index, as many as came back
    (a server that ignores `n` sends one)."""
    reply = StreamedReply(None)
    parts: dict[int, list[str]] = {}
    finish: dict[int, str | None] = {}
    stream = client.chat.completions.create(model=model, messages=clean_messages(messages), stream=True, n=n,
                                            **params)
    try:
        for chunk in stream:
            for choice in chunk.choices or []:
                finish[choice.index] = choice.finish_reason or finish.get(choice.index)
                text = choice.delta.content if choice.delta else None
                if text:
                    reply.add(text)
                    parts.setdefault(choice.index, []).append(text)
    except Exception as exc:
        if is_transport_error(exc):
            raise StreamBroken("".join(parts.get(0, [])), exc) from exc
        raise
    info = {k: params[k] for k in ("temperature", "seed") if k in params}
    return [("".join(parts.get(i, [])), reply.usage(completion_tokens=len(parts.get(i, [])),
                                                     extra={"finish_reason": finish.get(i), "streamed": True,
                                                            "usage_from": "counted", "n": n, **info}))
            for i in sorted(set(parts) | set(finish))][:n]


class OpenAIStreamClient(InProcessClientMixin):
    """AG2 custom model client: each create() is one streamed request to the provider's server."""

    provider: "OpenAIProvider"

    def create(self, params: dict[str, Any]) -> Any:
        """Answer params["messages"] with the sampling AG2 passes (temperature, seed, top_p), streaming tokens."""
        cfg = self.provider.config
        sampling = {k: params[k] for k in ("temperature", "seed", "top_p") if params.get(k) is not None}
        sampling.setdefault("temperature", cfg.temperature)
        max_tokens = params.get("max_tokens") or cfg.max_tokens
        if max_tokens:
            sampling["max_tokens"] = max_tokens
        return self.answered(*self.provider.chat(params.get("messages") or [], on_token=self.on_token, **sampling))


class OpenAIProvider(InProcessProviderMixin):
    """Provider for `provider: openai`."""

    Config = OpenAIConfig
    client_cls = OpenAIStreamClient

    def __init__(self, name: str, config: OpenAIConfig):
        self.name = name
        self.config = config
        self.last_usage: Usage | None = None
        self.usage_in_stream = True
        """False once the server refused stream_options: later calls count the tokens themselves."""
        self._client: Any = None

    def _api_key(self) -> str:
        """The key from the environment (after loading ./.env and the user config folder's), or the placeholder if
        optional."""
        from dotenv import load_dotenv

        for path in dotenv_files():
            load_dotenv(path, override=False)
        key = os.environ.get(self.config.api_key_env, "").strip()
        if key:
            return key
        if self.config.api_key_optional:
            return NO_KEY
        raise ModelUnavailable(f"model '{self.name}' needs {self.config.api_key_env}: put it in .env "
                               "(see configs/.env.example) or export it")

    def key_source(self) -> str:
        """Where the key sent came from, for an error line (never the key itself)."""
        return f"the key in {self.config.api_key_env} (.env or the environment)"

    def check_ready(self, console: Any = None) -> None:
        """The API key is available (no network call)."""
        self._api_key()

    def client(self) -> Any:
        """The `openai` SDK client for this server, made on first use; the only holder of the key."""
        if self._client is None:
            import openai

            self._client = openai.OpenAI(api_key=self._api_key(), base_url=self.config.base_url,
                                         timeout=self.config.timeout)
        return self._client

    def chat(self, messages: list[dict[str, Any]], on_token: TokenSink | None = None,
             **params: Any) -> tuple[str, Usage]:
        """One streamed reply; server errors become one line with the fix."""
        import openai

        with self.server_errors():
            try:
                return stream_chat(self.client(), self.config.model, messages, on_token=on_token,
                                   usage_in_stream=self.usage_in_stream, **params)
            except openai.BadRequestError as exc:
                if not self.usage_in_stream or "stream_options" not in str(exc):
                    raise
                self.usage_in_stream = False  # an older server: ask again without it, and count
                return stream_chat(self.client(), self.config.model, messages, on_token=on_token,
                                   usage_in_stream=False, **params)

    @contextmanager
    def server_errors(self) -> Iterator[None]:
        """The server's errors as one line with the fix (ModelUnavailable or CodeduetError)."""
        import openai

        try:
            yield
        except StreamBroken as exc:
            when = f"mid-reply, after {len(exc.text)} characters" if exc.text else "before it replied"
            raise ModelUnavailable(f"model '{self.name}': {self.where} closed the connection {when} ({exc}): "
                                   "start the server again; `codeduet replay <run> --resume` goes on from here",
                                   partial=exc.text or None) from None
        except openai.APIConnectionError as exc:
            raise ModelUnavailable(f"model '{self.name}': cannot reach {self.where} ({exc}): start the server or "
                                   "fix base_url (configs/llm.yaml or the scenario's model:)") from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ModelUnavailable(f"model '{self.name}': {self.where} refused {self.key_source()} "
                                   f"(HTTP {exc.status_code}): check it") from None
        except openai.NotFoundError:
            raise ModelUnavailable(f"model '{self.name}': {self.where} has no model '{self.config.model}' "
                                   "(HTTP 404): pull it on the server or fix the entry's model") from None
        except openai.APIStatusError as exc:
            detail = exc.body.get("message") if isinstance(exc.body, dict) else None
            raise CodeduetError(f"model '{self.name}': {self.where} answered HTTP {exc.status_code}: "
                                f"{(str(detail or exc.message).splitlines() or [''])[0][:200]}") from None

    def complete_many(self, messages: list[dict[str, Any]], samplings: list[dict[str, Any]],
                      on_token: TokenSink | None = None) -> list[tuple[str, Usage]]:
        """The first sampling streamed as one request; the others asked together with the server's `n` (they share
        a temperature) while it streams, each on its own request where the server does not honour `n`."""
        from concurrent.futures import ThreadPoolExecutor

        def params(s: dict[str, Any]) -> dict[str, Any]:
            out = {"temperature": self.config.temperature, **s}
            if self.config.max_tokens:
                out["max_tokens"] = self.config.max_tokens
            return out

        first, rest = samplings[0], samplings[1:]
        sink = on_token if on_token is not None else self.on_token
        quiet = beats_only(sink)  # the others do not stream, yet a budget's guard stops them
        with ThreadPoolExecutor(max_workers=max(1, len(samplings))) as pool:
            head = pool.submit(self.chat, messages, sink, **params(first))
            extra: list[tuple[str, Usage]] = []
            if rest and len({(s.get("temperature"), s.get("top_p")) for s in rest}) == 1 and len(rest) > 1:
                try:
                    with self.server_errors():
                        extra = stream_choices(self.client(), self.config.model, messages, len(rest),
                                               **params(rest[0]))
                except ModelUnavailable:
                    raise
                except CodeduetError:
                    extra = []  # the server refused `n`: one request each, below
            missing = pool.map(lambda s: self.chat(messages, quiet, **params(s)), rest[len(extra):])
            return [head.result(), *extra, *missing]

    @property
    def where(self) -> str:
        """The server, for error lines."""
        return self.config.base_url or "api.openai.com"

    def secrets(self) -> list[str]:
        """Key values the transcript writer must scrub."""
        try:
            key = self._api_key()
        except ModelUnavailable:
            return []
        return [] if key == NO_KEY else [key]

    def sampling_params(self, temperature: float | None, seed: int, top_p: float) -> dict[str, Any]:
        """Per-call sampling (the entry's temperature when None); seed and top_p only when sampling."""
        if temperature is None:
            return {"temperature": self.config.temperature}
        return {"temperature": temperature, "seed": seed, "top_p": top_p}

    def describe(self) -> dict[str, Any]:
        """Name, provider, model, server and settings; never the key."""
        return {"name": self.name, "provider": "openai", "model": self.config.model,
                "base_url": self.config.base_url, "api_key_env": self.config.api_key_env,
                "temperature": self.config.temperature, "streamed": True}
