"""The local model through llama-cpp-python: loaded once per process, prompt cache kept across turns, streamed."""

from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.loop.budget import beats_only, can_stop
from agents.loop.defaults import COMMAND
from agents.loop.errors import ModelUnavailable
from agents.loop.extras import needs
from agents.loop.protocols import TokenSink, Usage
from agents.models import download
from agents.models.batched import BatchedDecoder, SeqSampling
from agents.models.loops import find_loop, loop_check, looping, stopped_reply
from agents.models.response import InProcessClientMixin, InProcessProviderMixin, StreamedReply, clean_messages

if TYPE_CHECKING:
    from rich.console import Console


def import_llama_cpp() -> Any:
    """Import llama_cpp, or say in one line how to install it."""
    with needs("local", "the embedded model (llama-cpp-python)"):
        import llama_cpp

    return llama_cpp


class LlamaCppConfig(BaseModel):
    """A local llama.cpp model entry."""

    model_config = ConfigDict(extra="forbid")
    provider: str = "llama_cpp"
    """Always `llama_cpp`."""
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    """Model id shown in transcripts."""
    model_path: Path | None = None
    """The .gguf file; default CODEDUET_HOME/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf."""
    n_ctx: int = Field(default=8192, ge=2048, le=131072)
    """Context window in tokens; the oldest turns are dropped when a conversation outgrows it."""
    n_threads: int | None = Field(default=None, ge=1)
    """CPU threads; default: all cores."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature; 0 is greedy and reproducible."""
    top_p: float = Field(default=1.0, gt=0, le=1)
    """Nucleus sampling cut-off."""
    max_tokens: int = Field(default=1024, ge=1)
    """Most tokens per reply."""
    seed: int = 0
    """Sampling seed."""
    auto_pull: bool = True
    """Fetch the default model file (with a progress bar) on first use if it is missing."""


@dataclass
class LoadedModel:
    """One llama_cpp.Llama with what we need to count its prompts; shared by every client in the process."""

    llm: Any
    formatter: Any
    lock: threading.Lock
    load_s: float
    batched: Any = None
    """The BatchedDecoder for several replies at once (agents/models/batched.py), made on first use."""


_MODELS: dict[tuple[str, int, int], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the loaded models before the interpreter tears its modules down: llama-cpp-python's own __del__ at
    that point calls into a module already gone and prints an 'Exception ignored in Llama.__del__' traceback."""
    with _MODELS_LOCK:
        loaded = list(_MODELS.values())
        _MODELS.clear()
    for model in loaded:
        close = getattr(model.llm, "close", None)
        try:
            if model.batched is not None:
                model.batched.close()
            if close is not None:
                close()
        except Exception:
            pass


def load_model(path: Path, n_ctx: int, n_threads: int) -> LoadedModel:
    """The process-wide Llama for (path, n_ctx, n_threads), loaded on first use."""
    key = (str(Path(path).resolve()), n_ctx, n_threads)
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        llama_cpp = import_llama_cpp()
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        started = time.perf_counter()
        try:
            llm = llama_cpp.Llama(model_path=key[0], n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                                  n_batch=512, chat_format="chat_template.default", verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise ModelUnavailable(f"llama.cpp cannot load {path} ({exc}): check the file with "
                                   f"`{COMMAND} model status` or pull it again") from None
        eos, bos = llm.token_eos(), llm.token_bos()
        formatter = Jinja2ChatFormatter(
            template=llm.metadata["tokenizer.chat_template"],
            eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos])
        _MODELS[key] = LoadedModel(llm, formatter, threading.Lock(), round(time.perf_counter() - started, 3))
        return _MODELS[key]


def prompt_tokens(model: LoadedModel, messages: list[dict[str, str]]) -> list[int]:
    """The tokens create_chat_completion will evaluate for these messages (same template, same tokenizer)."""
    result = model.formatter(messages=messages)
    return model.llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)


def fit_messages(model: LoadedModel, messages: list[dict[str, str]],
                 limit: int) -> tuple[list[dict[str, str]], list[int], dict[str, int]]:
    """Drop the oldest turns (keeping system, the first user task and the last message) until the prompt fits."""
    msgs = list(messages)
    tokens = prompt_tokens(model, msgs)
    notes = {"trimmed_messages": 0, "truncated_chars": 0}
    keep = next((i for i, m in enumerate(msgs) if m["role"] == "user"), len(msgs))
    while len(tokens) > limit and keep + 1 < len(msgs) - 1:
        del msgs[keep + 1]
        notes["trimmed_messages"] += 1
        tokens = prompt_tokens(model, msgs)
    while len(tokens) > limit:  # still too long: cut the middle out of the longest message
        longest = max(range(len(msgs)), key=lambda i: len(msgs[i]["content"]))
        text = msgs[longest]["content"]
        chars_per_token = max(1.0, sum(len(m["content"]) for m in msgs) / max(1, len(tokens)))
        cut = min(len(text), int((len(tokens) - limit) * chars_per_token * 1.2) + 32)
        if cut <= 0 or not text:
            break
        head = (len(text) - cut) // 2
        msgs[longest] = {**msgs[longest], "content": text[:head] + "\n[...truncated...]\n" + text[head + cut:]}
        notes["truncated_chars"] += cut
        tokens = prompt_tokens(model, msgs)
    return msgs, tokens, {k: v for k, v in notes.items() if v}


def _perf(llm: Any, reset: bool = False) -> Any:
    """llama.cpp's context counters (prompt tokens evaluated, tokens generated), or None."""
    try:
        import llama_cpp

        if reset:
            llama_cpp.llama_perf_context_reset(llm.ctx)
            return None
        return llama_cpp.llama_perf_context(llm.ctx)
    except Exception:
        return None


def prefill(llm: Any, tokens: list[int], beat: TokenSink | None) -> None:
    """Evaluate the prompt's batches but the last, beat("") before each (a time budget's guard raises there: a cold
    2,300-token prompt is half a minute on 2 cores, and before the beats a long prompt ran a minute past the
    budget); create_chat_completion then finds them cached and evaluates the last batch itself. The batches are
    those Llama.generate would make (n_batch tokens from the longest cached prefix of all tokens but the last), so
    the numbers, and a greedy reply, are the same as without the beats (smaller ones changed a greedy reply). Only
    for a sink that can stop the generation (TimeBudget.guard marks it): evaluating the batches one call at a time
    measured about 5 % slower on a 3,576-token prompt (docs/BENCHMARKS.md, machine T)."""
    if beat is None or not can_stop(beat):  # no budget's guard to stop: llama-cpp-python evaluates it all at once
        return
    start = llm.longest_token_prefix(llm._input_ids.tolist(), tokens[:-1])
    llm.n_tokens = start
    while len(tokens) - start > llm.n_batch:
        beat("")
        llm.eval(tokens[start:start + llm.n_batch])
        start += llm.n_batch
    beat("")


def chat(model: LoadedModel, messages: list[dict[str, Any]], *, max_tokens: int, temperature: float = 0.0,
         top_p: float = 1.0, seed: int = 0, on_token: TokenSink | None = None) -> tuple[str, Usage]:
    """One streamed chat completion; the Llama reuses the longest token prefix it already evaluated."""
    llm = model.llm
    n_ctx = llm.n_ctx()
    with model.lock:
        msgs, tokens, notes = fit_messages(model, clean_messages(messages), n_ctx - min(max_tokens, n_ctx // 4))
        budget = max(1, min(max_tokens, n_ctx - len(tokens) - 1))
        cached = llm.longest_token_prefix(llm._input_ids.tolist(), tokens)
        _perf(llm, reset=True)
        reply = StreamedReply(on_token)  # its clock (time to first token) starts before the prompt's evaluation
        prefill(llm, tokens, on_token)
        finish = loop = None
        for chunk in llm.create_chat_completion(messages=msgs, stream=True, max_tokens=budget,
                                                temperature=temperature, top_p=top_p, seed=seed):
            choice = chunk["choices"][0]
            finish = choice.get("finish_reason") or finish
            piece = choice.get("delta", {}).get("content")
            if not reply.add(piece):
                continue
            if "\n" in piece:  # a line ended: a block of lines repeated (any period)?
                loop = find_loop(reply.text)
            if loop is not None or (len(reply.parts) % 16 == 0 and looping("".join(reply.parts[-200:]))):
                finish = "repetition"
                break
        perf = _perf(llm)
        # every generated token but the last is evaluated; the last is EOS (dropped) unless the budget ran out
        completion = max(0, llm.n_tokens - len(tokens)) + (1 if finish in ("length", "repetition") else 0)
    text, loop_note = stopped_reply(reply.text, loop)
    extra: dict[str, Any] = {**notes, "finish_reason": finish, "temperature": temperature, "seed": seed, **loop_note}
    if perf is not None:
        extra["prompt_eval_tokens"] = int(perf.n_p_eval)
        extra["prompt_eval_s"] = round(perf.t_p_eval_ms / 1000, 4)
        extra["eval_s"] = round(perf.t_eval_ms / 1000, 4)
    return text, reply.usage(prompt_tokens=len(tokens), completion_tokens=completion, cached_tokens=cached,
                             extra=extra)


def batched_decoder(model: LoadedModel, n_seq: int, max_tokens: int) -> Any:
    """The model's decoder for `n_seq` sequences (made, or made larger, on demand): room for the longest prompt
    `chat` allows plus every sequence's reply."""
    llm = model.llm
    n_ctx = llm.n_ctx() + (n_seq - 1) * max_tokens
    current = model.batched
    if current is None or current.n_seq < n_seq or current.n_ctx < n_ctx:
        if current is not None:
            current.close()
        model.batched = BatchedDecoder(llm, n_seq, n_ctx, llm.context_params.n_threads)
    return model.batched


def chat_many(model: LoadedModel, messages: list[dict[str, Any]], samplings: list[dict[str, Any]], *,
              max_tokens: int, on_token: TokenSink | None = None) -> list[tuple[str, Usage]]:
    """One reply per sampling ({temperature, top_p, seed}); the first streams to on_token. A greedy first reply (or
    a lone one) is `chat` itself: batched kernels round differently, and a batch-decoded greedy reply drifts from
    today's greedy reply (seen: clean_emails, a first-turn success, failed that way). The sampled ones are decoded
    together (agents/models/batched.py), each stopping on its own (end of turn, max_tokens, a loop, salvaged as in
    `chat`)."""
    out: list[tuple[str, Usage]] = []
    quiet = beats_only(on_token)  # the others do not stream, yet a budget's guard stops them
    for i, s in enumerate(samplings):
        if (i == 0 and not s.get("temperature")) or len(samplings) - i == 1:
            text, usage = chat(model, messages, max_tokens=max_tokens, on_token=on_token if i == 0 else quiet, **s)
            usage.extra.update(candidate=i + 1, candidates=len(samplings), batched=False)
            out.append((text, usage))
        else:
            return out + _decode_together(model, messages, samplings, i, max_tokens=max_tokens,
                                          on_token=on_token if i == 0 else quiet)
    return out


def _decode_together(model: LoadedModel, messages: list[dict[str, Any]], samplings: list[dict[str, Any]],
                     first: int, *, max_tokens: int, on_token: TokenSink | None) -> list[tuple[str, Usage]]:
    """The replies of samplings[first:] from one batched decode, numbered as candidates first+1.. of all."""
    llm = model.llm
    n_ctx = llm.n_ctx()
    seqs = [SeqSampling(float(s.get("temperature") or 0.0), float(s.get("top_p") or 1.0) if s.get("temperature")
                        else 1.0, int(s.get("seed") or 0)) for s in samplings[first:]]
    with model.lock:
        msgs, tokens, notes = fit_messages(model, clean_messages(messages), n_ctx - min(max_tokens, n_ctx // 4))
        budget = max(1, min(max_tokens, n_ctx - len(tokens) - 1))
        decoder = batched_decoder(model, len(seqs), budget)
        reply = StreamedReply(on_token)

        def stream(piece: str) -> None:
            if piece:
                reply.add(piece)
            elif on_token is not None:
                on_token(piece)  # a heartbeat: a budget guard may stop the batch here

        results, reused = decoder.generate(tokens, seqs, budget, on_token=stream, should_stop=loop_check)
    out = []
    for i, (res, s) in enumerate(zip(results, seqs), start=first):
        text, loop_note = stopped_reply(res.text, res.loop)
        extra: dict[str, Any] = {**notes, "finish_reason": res.finish, "temperature": s.temperature, "seed": s.seed,
                                 "candidate": i + 1, "candidates": len(samplings), "batched": True, **loop_note}
        out.append((text, Usage(prompt_tokens=len(tokens), completion_tokens=res.tokens, cached_tokens=reused,
                                seconds=res.seconds, first_token_s=res.first_token_s, extra=extra)))
    return out


class LlamaCppClient(InProcessClientMixin):
    """AG2 custom model client that runs the provider's local model in this process."""

    provider: "LlamaCppProvider"

    def create(self, params: dict[str, Any]) -> Any:
        """Answer params["messages"], streaming tokens to on_token."""
        cfg = self.provider.config
        model = self.provider.model()
        temperature = params.get("temperature", cfg.temperature)
        text, usage = chat(model, params.get("messages") or [], max_tokens=params.get("max_tokens") or cfg.max_tokens,
                           temperature=temperature, top_p=params.get("top_p", cfg.top_p) if temperature else 1.0,
                           seed=params.get("seed", cfg.seed), on_token=self.on_token)
        return self.answered(text, usage)


class LlamaCppProvider(InProcessProviderMixin):
    """Provider for `provider: llama_cpp`."""

    DEFAULT_CANDIDATES = 4
    """`strategy.candidates: auto` with the embedded model: four replies decoded together (docs/BENCHMARKS.md)."""

    def default_candidates(self) -> int:
        """Four: they decode in one batch."""
        return self.DEFAULT_CANDIDATES

    def complete_many(self, messages: list[dict[str, Any]], samplings: list[dict[str, Any]],
                      on_token: TokenSink | None = None) -> list[tuple[str, Usage]]:
        """Every sampling's reply from one batched decode (agents/models/batched.py)."""
        cfg = self.config
        asked = [{"temperature": s.get("temperature", cfg.temperature), "top_p": s.get("top_p", cfg.top_p),
                  "seed": s.get("seed", cfg.seed)} for s in samplings]
        return chat_many(self.model(), messages, asked, max_tokens=cfg.max_tokens,
                         on_token=on_token if on_token is not None else self.on_token)

    Config = LlamaCppConfig
    client_cls = LlamaCppClient
    console: Console | None = None
    """Where a model pull shows its progress (set by check_ready; None: stderr)."""

    @property
    def model_path(self) -> Path:
        """The configured .gguf, or the default download location."""
        return Path(self.config.model_path).expanduser() if self.config.model_path else download.default_model_file()

    @property
    def n_threads(self) -> int:
        """Configured threads, or every core."""
        return self.config.n_threads or os.cpu_count() or 1

    def check_ready(self, console: Console | None = None) -> None:
        """llama-cpp-python importable, and the model file present: pulled now (before any container
        starts, with a progress bar on console) when it is missing and auto_pull is on."""
        self.console = console
        import_llama_cpp()
        path = self.model_path
        if not path.is_file():
            if not self.config.auto_pull:
                raise ModelUnavailable(f"model file {path} missing: {download.PULL_HINT}")
            download.pull_model(path, console=self.console)
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelUnavailable(f"model file {path} is not a GGUF file (corrupt or wrong file): "
                                       f"{download.PULL_HINT} or fix model_path")

    def model(self) -> LoadedModel:
        """The loaded model, pulling the file first when it is missing and auto_pull is on."""
        path = self.model_path
        if not path.is_file():
            if not self.config.auto_pull:
                raise ModelUnavailable(f"model file {path} missing: {download.PULL_HINT}")
            path = download.pull_model(path, console=self.console)
        return load_model(path, self.config.n_ctx, self.n_threads)

    def describe(self) -> dict[str, Any]:
        """Name, provider, model id, file, hash (if verified) and settings."""
        path = self.model_path
        sha = download.cached_sha256(path) if path.is_file() else None
        return {"name": self.name, "provider": "llama_cpp", "model": self.config.model, "model_path": str(path),
                **({"sha256": sha} if sha else {}), "n_ctx": self.config.n_ctx, "n_threads": self.n_threads,
                "temperature": self.config.temperature}
