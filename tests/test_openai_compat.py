"""The OpenAI-compatible provider against a real HTTP server started here (it streams SSE), and configs/llm.yaml."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from agents.loop.budget import BudgetSpent, TimeBudget
from agents.loop.errors import (
    EXIT_BAD_INPUT,
    EXIT_ENVIRONMENT,
    EXIT_FAILED,
    BadInputError,
    CodeduetError,
    ModelUnavailable,
)
from agents.loop.protocols import ModelProvider
from agents.models.config import build_provider, load_models_file
from agents.record.display import ConsoleDisplay
from tests.conftest import IMAGE

REPLY = "Hello from the test server. TERMINATE"
KEY = "sk-test-0123456789"


def pieces_of(text: str, size: int = 5) -> list[str]:
    """The reply cut into the small pieces the server streams, one SSE chunk each."""
    return [text[i:i + size] for i in range(0, len(text), size)]


class ChatHandler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: streams server.pieces as SSE chunks, then usage (if asked for) and [DONE].

    server.usage: "send" (when stream_options asks), "omit" (never sent), "refuse" (HTTP 400 on stream_options).
    server.lockstep: a Semaphore the display releases per token; the server sends the next chunk only after the
    display has shown the previous one, so a client that buffered the reply would stall the server."""

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        server = self.server
        server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        if server.fail:
            self._json(server.fail, {"error": {"message": f"boom {server.fail}\nsecond line", "type": "x",
                                               "param": None, "code": None}})
            return
        if server.usage == "refuse" and "stream_options" in body:
            self._json(400, {"error": {"message": "Unrecognized request argument supplied: stream_options",
                                       "type": "invalid_request_error", "param": None, "code": None}})
            return
        time.sleep(server.delay)  # a server evaluating a long prompt sends nothing meanwhile
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if server.cut_after is not None:  # a body it promises and never finishes: the server dies mid-reply
            self.send_header("Content-Length", "1000000")
        self.end_headers()
        choices = range(int(body.get("n") or 1) if server.honour_n else 1)
        self._chunk({"role": "assistant", "content": ""})
        server.answered = True
        for sent, piece in enumerate(server.pieces):
            if sent == server.cut_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            for index in choices:  # a server that honours `n` sends each choice's pieces under its index
                self._chunk({"content": piece}, index=index)
            time.sleep(0.01)
            if server.lockstep is not None and not server.stalled:
                shown = server.lockstep.acquire(timeout=10)
                server.waits.append(shown)
                server.stalled = not shown
        self._chunk({}, finish="stop")
        if server.usage == "send" and (body.get("stream_options") or {}).get("include_usage"):
            self._event({**self._base(), "choices": [], "usage": {"prompt_tokens": 11,
                         "completion_tokens": len(server.pieces), "total_tokens": 11 + len(server.pieces)}})
        self.wfile.write(b"data: [DONE]\n\n")

    def _base(self) -> dict:
        return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000, "model": "x"}

    def _chunk(self, delta: dict, finish: str | None = None, index: int = 0) -> None:
        self._event({**self._base(), "choices": [{"index": index, "delta": delta, "finish_reason": finish}]})

    def _event(self, data: dict) -> None:
        self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        """Keep test output quiet."""


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    httpd.seen, httpd.pieces, httpd.usage = [], pieces_of(REPLY), "send"
    httpd.lockstep, httpd.waits, httpd.stalled, httpd.fail, httpd.honour_n = None, [], False, None, False
    httpd.cut_after, httpd.delay, httpd.answered = None, 0.0, False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(httpd) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1"


class RecordingDisplay(ConsoleDisplay):
    """The real live panel, on a terminal-like console in memory, keeping each streamed update."""

    def __init__(self, lockstep: threading.Semaphore | None = None):
        self.out = io.StringIO()
        super().__init__(Console(file=self.out, force_terminal=True, width=100))
        self.tokens: list[str] = []
        self.panels: list[str] = []
        self.lockstep = lockstep

    def on_token(self, text: str) -> None:
        if not text:  # a beat while the server sends nothing: the product's displays show nothing either
            return
        super().on_token(text)
        self.tokens.append(text)
        if self.live is not None:
            self.panels.append(self.buffer)
        if self.lockstep is not None:
            self.lockstep.release()


def test_assistant_agent_talks_to_a_real_openai_compatible_server(server, tmp_path):
    from autogen import AssistantAgent

    from agents.loop.attempt import install_turns
    from agents.loop.repeats import RepeatMemory
    from agents.loop.turn_policy import TurnPolicy
    from agents.record.display import NullDisplay
    from agents.record.transcript import JsonlRecorder
    from agents.scenario.strategy_config import StrategyConfig

    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    assert isinstance(provider, ModelProvider)
    provider.check_ready()
    agent = AssistantAgent("assistant", llm_config=provider.llm_config())
    provider.attach(agent)
    policy = TurnPolicy(StrategyConfig(repair_temperature=0.7, seed=3), 1, "NEVER", RepeatMemory(), lambda m: False)
    install_turns(agent, policy, provider, JsonlRecorder(tmp_path, {}), NullDisplay())
    reply = agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    assert (reply["content"] if isinstance(reply, dict) else reply) == REPLY
    assert len(server.seen) == 1
    request = server.seen[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer not-needed"
    assert request["body"]["model"] == "x" and request["body"]["temperature"] == 0  # the first turn: greedy
    assert request["body"]["stream"] is True and request["body"]["stream_options"] == {"include_usage": True}
    assert "seed" not in request["body"]
    assert request["body"]["messages"][-1] == {"role": "user", "content": "hi"}
    usage = provider.pop_usage()
    assert (usage.prompt_tokens, usage.completion_tokens) == (11, len(server.pieces))
    assert usage.extra["usage_from"] == "server" and usage.first_token_s is not None
    agent.generate_reply(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": REPLY},
                                   {"role": "user", "content": "it failed"}])
    repair = server.seen[1]["body"]  # a repair turn is sampled, with its own seed, on the same server
    assert repair["temperature"] == 0.7 and repair["top_p"] == 0.95 and repair["seed"] == 3 + 10_000 + 200
    assert provider.pop_usage().extra["seed"] == 3 + 10_000 + 200
    assert provider.pop_usage() is None
    assert provider.secrets() == []


def test_tokens_reach_the_live_panel_as_they_come(server):
    """The server sends each chunk only after the panel showed the previous one: a buffering client stalls it."""
    from autogen import AssistantAgent

    server.lockstep = threading.Semaphore(0)
    display = RecordingDisplay(server.lockstep)
    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    agent = AssistantAgent("assistant", llm_config=provider.llm_config())
    provider.attach(agent, on_token=display.on_token)
    display.generation_started("assistant")
    reply = agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    display.stop_live()
    assert (reply["content"] if isinstance(reply, dict) else reply) == REPLY
    assert server.waits == [True] * len(server.pieces)  # every chunk was on screen before the next was sent
    assert display.tokens == server.pieces
    assert display.panels[:3] == [REPLY[:5], REPLY[:10], REPLY[:15]]  # the panel grew piece by piece
    assert "assistant · streaming" in display.out.getvalue()
    usage = provider.pop_usage()
    assert usage.first_token_s is not None and 0 < usage.first_token_s <= usage.seconds


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_time_budget_stops_a_server_still_evaluating_the_prompt(server):
    """The server sends nothing for 20 s (a long prompt on a slow server): the reply's sink gets a beat every
    0.5 s meanwhile, so a spent budget stops the request before the server has answered at all."""
    server.delay = 20
    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    budget = TimeBudget(1)
    with pytest.raises(BudgetSpent):
        provider.chat([{"role": "user", "content": "hi"}], budget.guard(lambda _text: None, lambda: "while generating"))
    assert not server.answered


@pytest.mark.parametrize("server_usage", ["omit", "refuse"])
def test_without_usage_from_the_server_the_tokens_are_counted(server, server_usage):
    """A server that ignores stream_options is counted; one that refuses it is asked again without it, once."""
    from autogen import AssistantAgent

    server.usage = server_usage
    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    agent = AssistantAgent("assistant", llm_config=provider.llm_config())
    provider.attach(agent)
    for _ in range(2):
        reply = agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
        assert (reply["content"] if isinstance(reply, dict) else reply) == REPLY
        usage = provider.pop_usage()
        assert usage.extra["usage_from"] == "counted" and usage.prompt_tokens is None
        assert usage.completion_tokens == len(server.pieces) and usage.first_token_s is not None
    asked_usage = ["stream_options" in s["body"] for s in server.seen]
    assert asked_usage == ([True, True] if server_usage == "omit" else [True, False, False])


def test_the_key_is_sent_but_never_described(server, monkeypatch):
    from autogen import AssistantAgent

    monkeypatch.setenv("CODEDUET_TEST_KEY", KEY)
    provider = build_provider({"name": "remote", "provider": "openai", "model": "gpt-test", "base_url": _url(server),
                               "api_key_env": "CODEDUET_TEST_KEY", "max_tokens": 50})
    config = provider.llm_config()
    assert KEY not in json.dumps(config) and config["cache_seed"] is None  # AG2 never holds the key
    agent = AssistantAgent("assistant", llm_config=config)
    provider.attach(agent)
    agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    assert server.seen[0]["auth"] == f"Bearer {KEY}"
    assert server.seen[0]["body"]["max_tokens"] == 50
    assert provider.secrets() == [KEY]
    described = json.dumps(provider.describe())
    assert "sk-test" not in described and provider.describe()["name"] == "remote"


@pytest.mark.docker
def test_a_streamed_run_records_ttft_and_never_the_key(server, sandbox_image, workspaces, tmp_path, monkeypatch):
    """A whole scenario against the streaming server: the code runs in the sandbox, the transcript has the reply,
    its usage and TTFT, and the key appears nowhere in the run folder."""
    from agents.loop.conversation import RunOptions, run_scenario
    from agents.record.transcript import load_transcript
    from agents.scenario.spec import load_scenario

    reply = "Here is the script:\n```python\nprint(6 * 7)\n```"
    server.pieces = pieces_of(reply, 4)
    monkeypatch.setenv("CODEDUET_TEST_KEY", KEY)
    path = tmp_path / "streamed.yaml"
    path.write_text(yaml.safe_dump({
        "name": "streamed", "task": "Print 6 times 7.",
        "model": {"provider": "openai", "model": "x", "base_url": _url(server), "api_key_env": "CODEDUET_TEST_KEY"},
        "sandbox": {"image": IMAGE, "timeout": 10}, "strategy": {"attempts": 1},
        "checks": [{"stdout_contains": "42"}]}), encoding="utf-8")
    display = RecordingDisplay()
    result = run_scenario(load_scenario(path), RunOptions(), display=display)
    assert result.status == "success", result.reason
    assert "".join(display.tokens) == reply and len(display.panels) == len(server.pieces)
    assistant = [m for m in load_transcript(result.run_dir)["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == [reply]
    usage = assistant[0]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (11, len(server.pieces))
    assert usage["first_token_s"] > 0 and usage["extra"]["usage_from"] == "server"
    assert f"first_token_s={usage['first_token_s']}" in display.out.getvalue()  # shown under the final panel
    assert server.seen[0]["auth"] == f"Bearer {KEY}"
    for file in Path(result.run_dir).rglob("*"):
        if file.is_file():
            text = file.read_text(encoding="utf-8", errors="replace")
            assert "sk-test" not in text and "***" not in text, file  # never written, so never scrubbed either


@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_an_unreachable_server_is_one_actionable_line():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = build_provider({"name": "local-vllm", "provider": "openai", "model": "x",
                               "base_url": f"http://127.0.0.1:{port}/v1", "api_key_optional": True})
    with pytest.raises(ModelUnavailable) as err:
        provider.chat([{"role": "user", "content": "hi"}])
    assert str(err.value).startswith(f"model 'local-vllm': cannot reach http://127.0.0.1:{port}/v1 (")
    assert str(err.value).endswith("start the server or fix base_url (configs/llm.yaml or the scenario's model:)")
    assert err.value.exit_code == EXIT_ENVIRONMENT


def test_a_server_gone_mid_reply_is_one_line_that_keeps_what_it_sent(server):
    server.cut_after = 3
    provider = build_provider({"name": "remote", "provider": "openai", "model": "x", "base_url": _url(server),
                               "api_key_optional": True})
    with pytest.raises(ModelUnavailable) as err:
        provider.chat([{"role": "user", "content": "hi"}])
    assert str(err.value).startswith(f"model 'remote': {_url(server)} closed the connection mid-reply, after 15 "
                                     "characters (RemoteProtocolError: ")
    assert str(err.value).endswith("start the server again; `codeduet replay <run> --resume` goes on from here")
    assert err.value.partial == REPLY[:15] and err.value.exit_code == EXIT_ENVIRONMENT


@pytest.mark.parametrize("status, line, exit_code", [
    (401, "model 'remote': {url} refused the key in CODEDUET_TEST_KEY (.env or the environment) (HTTP 401): "
     "check it", EXIT_ENVIRONMENT),
    (404, "model 'remote': {url} has no model 'x' (HTTP 404): pull it on the server or fix the entry's model",
     EXIT_ENVIRONMENT),
    (500, "model 'remote': {url} answered HTTP 500: boom 500", EXIT_FAILED)])
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_a_server_error_is_one_line(server, monkeypatch, status, line, exit_code):
    monkeypatch.setenv("CODEDUET_TEST_KEY", KEY)
    server.fail = status
    provider = build_provider({"name": "remote", "provider": "openai", "model": "x", "base_url": _url(server),
                               "api_key_env": "CODEDUET_TEST_KEY"})
    with pytest.raises(CodeduetError) as err:
        provider.chat([{"role": "user", "content": "hi"}])
    assert str(err.value) == line.format(url=_url(server)) and err.value.exit_code == exit_code


def test_missing_key_is_one_actionable_line(monkeypatch):
    monkeypatch.delenv("CODEDUET_TEST_NO_SUCH_KEY", raising=False)
    provider = build_provider({"name": "openai", "provider": "openai", "model": "gpt-4o-mini",
                               "api_key_env": "CODEDUET_TEST_NO_SUCH_KEY"})
    with pytest.raises(ModelUnavailable) as err:
        provider.check_ready()
    assert str(err.value) == ("model 'openai' needs CODEDUET_TEST_NO_SUCH_KEY: put it in .env "
                              "(see configs/.env.example) or export it")
    assert err.value.exit_code == EXIT_ENVIRONMENT
    assert provider.secrets() == []


def test_a_typo_in_an_entry_names_the_key():
    with pytest.raises(BadInputError) as err:
        build_provider({"provider": "openai", "model": "x", "base_ur": "http://localhost:1/v1"})
    assert "base_ur" in str(err.value) and err.value.exit_code == EXIT_BAD_INPUT


def test_every_entry_of_configs_llm_yaml_builds():
    models, _, path = load_models_file()
    assert models.default == "local"
    assert set(models.models) >= {"local", "openai", "ollama", "vllm", "scripted"}
    for name in models.models:
        provider = build_provider(name)
        described = provider.describe()
        assert described["name"] == name and described["provider"] == models.models[name]["provider"]
    assert build_provider("ollama").describe()["base_url"] == "http://localhost:11434/v1"
    assert build_provider(None).describe()["provider"] == "llama_cpp"


@pytest.mark.parametrize("honour_n", [True, False])
def test_candidates_are_asked_with_n_or_one_request_each_where_the_server_ignores_it(server, honour_n):
    """complete_many: the first candidate streams on its own request; the sampled ones go as one request with `n`,
    and a server that sends back fewer choices than asked is asked again, one request per missing candidate."""
    server.honour_n = honour_n
    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    shown: list[str] = []
    replies = provider.complete_many([{"role": "user", "content": "hi"}],
                                     [provider.sampling_params(None, 0, 1.0)] +
                                     [provider.sampling_params(0.7, seed, 0.95) for seed in (1, 2, 3)],
                                     on_token=shown.append)
    assert [text for text, _ in replies] == [REPLY] * 4 and "".join(shown) == REPLY  # only the first streamed
    asked = sorted((s["body"].get("n") or 1, s["body"].get("temperature")) for s in server.seen)
    assert asked == ([(1, 0.0), (3, 0.7)] if honour_n else [(1, 0.0), (1, 0.7), (1, 0.7), (3, 0.7)])
