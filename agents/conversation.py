"""Build the AssistantAgent and the sandbox UserProxyAgent from a Scenario, run them, record everything."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autogen import AssistantAgent

from agents.codeblocks import extract_code_blocks
from agents.display import NullDisplay
from agents.errors import CodeduetError
from agents.models.config import build_provider
from agents.paths import default_workspaces
from agents.prompts import PROMPT_VERSION, system_message
from agents.protocols import ModelProvider
from agents.proxy import HumanInput, SandboxProxy
from agents.quiet_io import quiet_ag2
from agents.sandbox import make_executor
from agents.sandbox.preflight import preflight
from agents.scenario import Scenario
from agents.termination import RunContext, compile_predicate
from agents.transcript import JsonlRecorder, new_run_dir


@dataclass
class RunOptions:
    """Per-invocation overrides of the scenario and where things go."""

    model: str | None = None
    max_auto_reply: int | None = None
    human: str | None = None
    workspaces: Path | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    """Prior messages ({sender_role: assistant|user_proxy, content}) to seed, for resume."""
    parent: dict[str, Any] | None = None
    first_message: str | None = None


@dataclass
class RunResult:
    """What a finished run left behind."""

    run_dir: Path
    status: str
    reason: str
    totals: dict[str, Any]
    transcript: Path
    error: CodeduetError | None = None


def resolve_model(scenario: Scenario, opts: RunOptions) -> ModelProvider:
    """The provider for --model, else the scenario's model, else configs/llm.yaml's default."""
    spec = opts.model if opts.model is not None else scenario.model
    return build_provider(spec, origin=str(scenario.path or "<scenario>"))


def _seed_history(assistant: Any, proxy: Any, history: list[dict[str, Any]]) -> None:
    for msg in history:
        by_assistant = msg.get("role") == "assistant"
        content = msg.get("content") or ""
        assistant._oai_messages[proxy].append({"content": content, "role": "assistant" if by_assistant else "user"})
        proxy._oai_messages[assistant].append({"content": content, "role": "user" if by_assistant else "assistant"})


def run_scenario(scenario: Scenario, opts: RunOptions | None = None, display: Any = None,
                 human: HumanInput | None = None) -> RunResult:
    """Run one scenario end to end; the transcript is written whatever happens."""
    opts = opts or RunOptions()
    display = display or NullDisplay()
    provider = resolve_model(scenario, opts)
    if hasattr(provider, "console"):  # an automatic model pull shows its progress bar here
        provider.console = getattr(display, "console", None)
    provider.check_ready()
    for line in preflight(scenario.sandbox):
        display.info(line)
    run_dir, run_id = new_run_dir(opts.workspaces or default_workspaces(), scenario.name or "run")
    workspace = run_dir / "workspace"
    workspace.mkdir()
    for name, content in scenario.files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(content, encoding="utf-8")
    executor = make_executor(scenario.sandbox, workspace, run_id)
    limit = scenario.user_proxy.max_consecutive_auto_reply if opts.max_auto_reply is None else opts.max_auto_reply
    mode = (opts.human or scenario.user_proxy.human_input_mode).upper()
    secrets = getattr(provider, "secrets", lambda: [])()
    recorder = JsonlRecorder(run_dir, {
        "run_id": run_id, "run_dir": str(run_dir), "scenario": scenario.snapshot(), "model": provider.describe(),
        "sandbox": {"kind": scenario.sandbox.kind, "image": scenario.sandbox.image},
        "human_input_mode": mode, "max_consecutive_auto_reply": limit, "prompt_version": PROMPT_VERSION,
        "parent": opts.parent}, secrets=secrets)
    display.run_started(scenario, provider.describe(), run_dir)
    status, reason, error = "error", "the run did not finish", None
    try:
        executor.start()
        recorder.event("sandbox", **executor.describe())
        context = RunContext()
        predicate = compile_predicate(scenario.termination)
        proxy = SandboxProxy(scenario, executor, context, human_input_mode=mode, max_consecutive_auto_reply=limit,
                             human=human, display=display,
                             is_termination_msg=lambda m: predicate(m, context) and not extract_code_blocks(m.get("content")))
        with quiet_ag2():
            assistant = AssistantAgent(scenario.assistant.name, llm_config=provider.llm_config(),
                                       system_message=scenario.assistant.system_message or system_message(),
                                       is_termination_msg=lambda m: predicate(m, context),
                                       max_consecutive_auto_reply=limit + 10, human_input_mode="NEVER")
        provider.attach(assistant, on_token=display.on_token)
        _install_recording(assistant, proxy, provider, recorder, display)
        _seed_history(assistant, proxy, opts.history)
        with quiet_ag2():
            proxy.initiate_chat(assistant, message=opts.first_message or scenario.task,
                                clear_history=not opts.history)
        status, reason = final_status(proxy, limit)
    except KeyboardInterrupt:
        status, reason = "interrupted", "stopped by Ctrl-C / SIGTERM"
        raise
    except CodeduetError as exc:
        status, reason, error = "error", str(exc), exc
    except Exception as exc:  # a bug or a backend failure: recorded, then shown as one line
        status, reason = "error", f"{type(exc).__name__}: {exc}".splitlines()[0]
        error = CodeduetError(reason)
    finally:
        display.stop_live()
        executor.stop()
        path = recorder.finish(status, reason)
        display.run_finished(status, reason, run_dir)
    return RunResult(run_dir, status, reason, recorder.totals(), path, error)


def final_status(proxy: SandboxProxy, limit: int) -> tuple[str, str]:
    """success | failed | max_replies, with a reason a person can read."""
    last = proxy.last_executed
    ok = last is not None and last.success
    if proxy.stop_reason == "max_replies":
        return "max_replies", f"reached max_consecutive_auto_reply={limit}" + (
            " (the last execution succeeded)" if ok else "")
    if ok:
        return "success", "the last execution exited 0 and every check passed"
    if proxy.stop_reason == "human_exit":
        return "failed", "ended by the user before a successful execution"
    if last is None:
        return "failed", "the conversation ended without any code being executed"
    return "failed", "the conversation ended after a failed execution or failed checks"


def _install_recording(assistant: Any, proxy: SandboxProxy, provider: ModelProvider,
                       recorder: JsonlRecorder, display: Any) -> None:
    """Record every message as it is sent (AG2 hook), with code blocks, executions, checks and usage."""
    state = {"first": True}

    def hook(sender: Any, message: Any, recipient: Any, silent: bool) -> Any:
        content = message if isinstance(message, str) else (message or {}).get("content")
        event: dict[str, Any] = {"sender": sender.name, "recipient": recipient.name, "content": content}
        if sender is assistant:
            event["role"] = "assistant"
            event["code_blocks"] = [b.to_dict() for b in extract_code_blocks(content)]
            usage = provider.pop_usage()
            if usage:
                event["usage"] = usage.to_dict()
        elif state["first"]:
            event["role"] = "task"
        elif proxy.pending is not None and content == proxy.pending.feedback:
            event["role"] = "execution" if proxy.pending.kind == "executed" else "user_proxy"
            event["outcome"] = proxy.pending.to_dict()
            proxy.pending = None
        elif content in proxy.human_contents:
            event["role"] = "human"
        else:
            event["role"] = "user_proxy"
        state["first"] = False
        recorder.event("message", **event)
        display.on_message(event)
        if sender is proxy:
            display.generation_started(assistant.name)
        return message

    assistant.register_hook("process_message_before_send", hook)
    proxy.register_hook("process_message_before_send", hook)

