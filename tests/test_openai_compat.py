"""The OpenAI-compatible provider against a real HTTP server started here, and configs/llm.yaml."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents.errors import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, BadInputError, ModelUnavailable
from agents.models.config import build_provider, load_models_file
from agents.protocols import ModelProvider

REPLY = "Hello from the test server. TERMINATE"


class ChatHandler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: answers REPLY with usage, and records what it was sent."""

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        payload = json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": REPLY}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        """Keep test output quiet."""


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(httpd) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def test_assistant_agent_talks_to_a_real_openai_compatible_server(server, tmp_path):
    from autogen import AssistantAgent

    from agents.display import NullDisplay
    from agents.repeats import RepeatMemory
    from agents.scenario import StrategyConfig
    from agents.strategy import SamplingPolicy, install_sampled_reply
    from agents.transcript import JsonlRecorder

    provider = build_provider({"provider": "openai", "model": "x", "base_url": _url(server), "api_key_optional": True})
    assert isinstance(provider, ModelProvider)
    provider.check_ready()
    agent = AssistantAgent("assistant", llm_config=provider.llm_config())
    provider.attach(agent)
    policy = SamplingPolicy(StrategyConfig(repair_temperature=0.7, seed=3), attempt=1)
    install_sampled_reply(agent, provider, policy, RepeatMemory(), JsonlRecorder(tmp_path, {}), NullDisplay())
    reply = agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    assert (reply["content"] if isinstance(reply, dict) else reply) == REPLY
    assert len(server.seen) == 1
    request = server.seen[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer not-needed"
    assert request["body"]["model"] == "x" and request["body"]["temperature"] == 0  # the first turn: greedy
    assert "seed" not in request["body"]
    assert request["body"]["messages"][-1] == {"role": "user", "content": "hi"}
    agent.generate_reply(messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": REPLY},
                                   {"role": "user", "content": "it failed"}])
    repair = server.seen[1]["body"]  # a repair turn is sampled, with its own seed, on the same server
    assert repair["temperature"] == 0.7 and repair["top_p"] == 0.95 and repair["seed"] == 3 + 10_000 + 200
    usage = provider.pop_usage()  # both calls
    assert (usage.prompt_tokens, usage.completion_tokens) == (22, 14)
    assert provider.pop_usage() is None
    assert provider.secrets() == []


def test_the_key_is_sent_but_never_described(server, monkeypatch):
    from autogen import AssistantAgent

    monkeypatch.setenv("CODEDUET_TEST_KEY", "sk-test-0123456789")
    provider = build_provider({"name": "remote", "provider": "openai", "model": "gpt-test", "base_url": _url(server),
                               "api_key_env": "CODEDUET_TEST_KEY", "max_tokens": 50})
    config = provider.llm_config()
    assert config["config_list"][0]["api_key"] == "sk-test-0123456789" and config["cache_seed"] is None
    agent = AssistantAgent("assistant", llm_config=config)
    agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    assert server.seen[0]["auth"] == "Bearer sk-test-0123456789"
    assert server.seen[0]["body"]["max_tokens"] == 50
    assert provider.secrets() == ["sk-test-0123456789"]
    described = json.dumps(provider.describe())
    assert "sk-test" not in described and provider.describe()["name"] == "remote"


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
    assert build_provider("ollama").llm_config()["config_list"][0]["base_url"] == "http://localhost:11434/v1"
    assert build_provider(None).describe()["provider"] == "llama_cpp"
