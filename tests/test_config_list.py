"""AG2's OAI_CONFIG_LIST as a model (agents/models/config_list.py): read as AG2 reads it, served by the
OpenAI-compatible provider against the streaming test server, refused in one line where it cannot be, and its key
never written anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.loop.errors import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, BadInputError, ModelUnavailable
from agents.models.config import build_provider
from agents.models.config_list import filtered, parse_spec, read_config_list
from tests.conftest import IMAGE
from tests.helpers import run_cli
from tests.test_openai_compat import _url, pieces_of, server  # noqa: F401 (the streaming test server fixture)

LIST_KEY = "sk-list-9f8e7d6c5b4a"
ENTRIES = [
    {"model": "claude-3-5-sonnet", "api_type": "anthropic", "api_key": "sk-ant-000000000"},
    {"model": "gpt-4o", "api_key": "sk-openai-11111111", "tags": ["premium", "latest"]},
    {"model": "gpt-4o-mini", "api_type": "openai", "api_key": "sk-openai-22222222", "tags": ["cheap"]},
    {"model": "qwen", "base_url": "http://127.0.0.1:1/v1", "api_key": "sk-local-33333333"},
]


@pytest.fixture
def lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder (the current one) holding ENTRIES as list.json and in conf/OAI_LIST, with variables naming them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "list.json").write_text(json.dumps(ENTRIES), encoding="utf-8")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "OAI_LIST").write_text(json.dumps(ENTRIES), encoding="utf-8")
    monkeypatch.setenv("CODEDUET_TEST_LIST_JSON", json.dumps(ENTRIES))
    monkeypatch.setenv("CODEDUET_TEST_LIST_FILE", str(tmp_path / "list.json"))
    monkeypatch.delenv("CODEDUET_TEST_NO_LIST", raising=False)
    return tmp_path


@pytest.mark.parametrize("env_or_file, file_location", [
    ("CODEDUET_TEST_LIST_JSON", ""), ("CODEDUET_TEST_LIST_FILE", ""), ("list.json", ""), ("OAI_LIST", "conf")])
@pytest.mark.parametrize("filter_dict", [
    None, {"model": ["gpt-4o", "qwen"]}, {"model": "gpt-4o-mini"}, {"tags": ["premium"]}, {"tags": "cheap"},
    {"api_type": ["openai"]}, {"model": ["gpt-4o", "gpt-4o-mini"], "tags": ["cheap"]}, {"model": ["nothing"]}])
def test_the_list_is_read_and_filtered_as_ag2_reads_it(lists, env_or_file, file_location, filter_dict):
    from autogen.llm_config.utils import config_list_from_json

    ours = [e for _, e in filtered(read_config_list(env_or_file, file_location)[0], filter_dict)]
    assert ours == config_list_from_json(env_or_file, file_location, filter_dict)


def test_the_command_line_form_is_a_filter():
    assert parse_spec("oai:OAI_CONFIG_LIST") == {"provider": "oai_config_list", "env_or_file": "OAI_CONFIG_LIST"}
    assert parse_spec("oai:conf/list.json?model=gpt-4o,gpt-4o-mini&api_type=openai") == {
        "provider": "oai_config_list", "env_or_file": "conf/list.json",
        "filter_dict": {"model": ["gpt-4o", "gpt-4o-mini"], "api_type": ["openai"]}}


def test_the_chosen_entry_talks_to_the_server_with_its_key_and_nothing_else_holds_it(server, monkeypatch):  # noqa: F811
    from autogen import AssistantAgent

    entries = [*ENTRIES, {"model": "served", "base_url": _url(server), "api_key": LIST_KEY, "temperature": 0.3}]
    monkeypatch.setenv("CODEDUET_TEST_LIST_JSON", json.dumps(entries))
    provider = build_provider("oai:CODEDUET_TEST_LIST_JSON?model=served")
    provider.check_ready()
    config = provider.llm_config()
    agent = AssistantAgent("assistant", llm_config=config)
    provider.attach(agent)
    agent.generate_reply(messages=[{"role": "user", "content": "hi"}])
    seen = server.seen[0]
    assert seen["auth"] == f"Bearer {LIST_KEY}" and seen["body"]["model"] == "served"
    assert seen["body"]["temperature"] == 0.3  # the entry's own, as AG2 would send it
    assert provider.secrets() == [LIST_KEY]
    described = provider.describe()
    assert (described["entry"], described["entries_matching"], described["model"]) == (5, 1, "served")
    for held in (json.dumps(config), json.dumps(described), repr(provider.chosen)):
        assert "sk-" not in held


@pytest.mark.parametrize("setup, env_or_file, filter_dict, line", [
    (None, "CODEDUET_TEST_NO_LIST", None,
     "CODEDUET_TEST_NO_LIST: neither an environment variable nor a file ({cwd}/CODEDUET_TEST_NO_LIST): export it "
     "holding the JSON list or a file's path, or give the file's path"),
    ("bad.json", "bad.json", None, "bad.json: not valid JSON (Expecting ',' delimiter at line 1 column 51)"),
    ("env", "CODEDUET_TEST_BAD", None,
     "$CODEDUET_TEST_BAD: neither an existing file nor JSON (Expecting value at line 1 column 1)"),
    (None, "list.json", {"model": ["gpt-5"]},
     "list.json: no entry of 4 matches filter_dict {'model': ['gpt-5']} (models there: claude-3-5-sonnet, gpt-4o, "
     "gpt-4o-mini, qwen)"),
    (None, "list.json", None,
     "list.json entry 1 (model claude-3-5-sonnet): api_type anthropic is not supported; codeduet talks to OpenAI and "
     "OpenAI-compatible servers (api_type openai, or none, with base_url for a server of your own): choose such an "
     "entry with filter_dict, e.g. ?api_type=openai"),
    ("extra.json", "extra.json", None,
     "extra.json entry 1 (model gpt-4o): codeduet does not use 'default_headers' (it reads api_key, api_type, "
     "base_url, max_tokens, model, temperature): remove it or choose another entry with filter_dict"),
    ("dict.json", "dict.json", None,
     'dict.json: an AG2 config list is a JSON list of entries like {"model": "gpt-4o", "api_key": "..."}, not dict'),
])
def test_bad_input_is_one_line_that_never_shows_a_key(lists, monkeypatch, setup, env_or_file, filter_dict, line):
    if setup == "bad.json":
        (lists / "bad.json").write_text('[{"model": "gpt-4o", "api_key": "sk-bad-4444444"} {"model": "x"}]')
    elif setup == "env":
        monkeypatch.setenv("CODEDUET_TEST_BAD", "sk-bad-4444444 is not a list")
    elif setup == "extra.json":
        (lists / "extra.json").write_text(json.dumps([{"model": "gpt-4o", "default_headers": {"X-Key": "sk-bad"}}]))
    elif setup == "dict.json":
        (lists / "dict.json").write_text(json.dumps({"model": "gpt-4o", "api_key": "sk-bad-4444444"}))
    provider = build_provider({"provider": "oai_config_list", "env_or_file": env_or_file, "filter_dict": filter_dict})
    with pytest.raises(BadInputError) as err:
        provider.check_ready()
    assert str(err.value) == line.replace("{cwd}", str(lists)) and err.value.exit_code == EXIT_BAD_INPUT
    assert "sk-" not in str(err.value)


def test_an_entry_without_a_key_falls_back_to_openai_api_key(lists, monkeypatch):
    (lists / "nokey.json").write_text(json.dumps([{"model": "gpt-4o"}, {"model": "local", "base_url": "http://x/v1"}]))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelUnavailable) as err:
        build_provider("oai:nokey.json").check_ready()
    assert str(err.value) == ("nokey.json entry 1 (model gpt-4o) has no api_key and OPENAI_API_KEY is not set: add "
                              "the key to the entry or put OPENAI_API_KEY in .env (or give the entry a base_url)")
    assert err.value.exit_code == EXIT_ENVIRONMENT
    assert build_provider("oai:nokey.json?model=local").secrets() == []  # a server of your own needs none
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-66666666")
    assert build_provider("oai:nokey.json").secrets() == ["sk-env-66666666"]


@pytest.mark.parametrize("model, line", [
    ("oai:CODEDUET_TEST_NO_LIST", "error: CODEDUET_TEST_NO_LIST: neither an environment variable nor a file"),
    ("oai:list.json?api_type=anthropic",
     "error: list.json entry 1 (model claude-3-5-sonnet): api_type anthropic is not supported;")])
@pytest.mark.slow  # over 1 s: left out of `make check`, run in the docker tier
def test_the_cli_refuses_a_list_it_cannot_use_in_one_line(lists, model, line):
    scenario = lists / "s.yaml"
    scenario.write_text(yaml.safe_dump({"name": "s", "task": "Print 1."}), encoding="utf-8")
    proc = run_cli("run", str(scenario), "--model", model, "--workspace", str(lists / "ws"), cwd=lists,
                   env={"CODEDUET_TEST_NO_LIST": ""})
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert proc.stderr.startswith(line) and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (lists / "ws").exists()  # refused before a run folder or a container


@pytest.mark.docker
def test_a_run_on_a_config_list_leaves_its_key_nowhere(server, sandbox_image, tmp_path):  # noqa: F811
    """`codeduet run --model oai:VAR?model=...` as a real process: the key reaches the server and no file of the run
    folder, no line of the output, and not the sandbox's environment (the code prints it)."""
    reply = ("Here is the script:\n```python\nimport os\n"
             "print(sorted(k for k in os.environ))\n"
             "print(os.environ.get('CODEDUET_TEST_LIST', 'no list in the sandbox'))\n```")
    server.pieces = pieces_of(reply, 6)
    entries = [ENTRIES[0], {"model": "served", "base_url": _url(server), "api_key": LIST_KEY}]
    scenario = tmp_path / "leak.yaml"
    scenario.write_text(yaml.safe_dump({
        "name": "leak", "task": "Show the environment.", "sandbox": {"image": IMAGE, "timeout": 10},
        "strategy": {"attempts": 1}, "checks": [{"stdout_contains": "no list in the sandbox"}]}), encoding="utf-8")
    proc = run_cli("run", str(scenario), "--model", "oai:CODEDUET_TEST_LIST?model=served", "--workspace",
                   str(tmp_path / "ws"), env={"CODEDUET_TEST_LIST": json.dumps(entries)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert server.seen[0]["auth"] == f"Bearer {LIST_KEY}"
    assert LIST_KEY not in proc.stdout + proc.stderr and "no list in the sandbox" in proc.stdout
    run_dir = next((tmp_path / "ws" / "leak").iterdir())
    transcript = json.loads((run_dir / "transcript.json").read_text(encoding="utf-8"))
    assert transcript["model"]["model"] == "served" and transcript["model"]["entry"] == 2
    execution = next(m for m in transcript["messages"] if m["role"] == "execution")
    assert "CODEDUET_TEST_LIST" not in execution["content"].split("no list in the sandbox")[0]
    files = [f for f in run_dir.rglob("*") if f.is_file()]
    assert files
    for file in files:
        text = file.read_text(encoding="utf-8", errors="replace")
        assert "sk-list" not in text and "***" not in text, file  # never written, so never scrubbed either


def test_a_refused_entry_key_is_named_as_the_entry_not_as_openai_api_key(server, monkeypatch):  # noqa: F811
    entries = [{"model": "served", "base_url": _url(server), "api_key": LIST_KEY}]
    monkeypatch.setenv("CODEDUET_TEST_LIST_JSON", json.dumps(entries))
    server.fail = 401
    provider = build_provider("oai:CODEDUET_TEST_LIST_JSON?model=served")
    with pytest.raises(ModelUnavailable) as err:
        provider.chat([{"role": "user", "content": "hi"}])
    assert "refused the api_key of $CODEDUET_TEST_LIST_JSON entry 1 (model served) (HTTP 401)" in str(err.value)
    assert "OPENAI_API_KEY" not in str(err.value) and LIST_KEY not in str(err.value)
