"""Several replies to one prompt in one decode loop (llama.cpp's batch API, through llama-cpp-python's bindings).

Generating is memory-bound on a CPU: every step reads the 1.1 GB of weights once. Decoding one token for each of N
sequences in the same step reads them once for all N, so N replies cost far less than N times one (measured in
docs/BENCHMARKS.md, `codeduet bench llm --parallel`). The prompt is evaluated once on sequence 0 and shared with
the others (`llama_memory_seq_cp`); each sequence then samples with its own sampler chain (its own seed and
temperature; greedy where the temperature is 0, the chain `Llama.create_chat_completion` builds otherwise) and
stops on its own: end of turn, its token budget, or a loop. The evaluated prompt stays in the context, so the next
call reuses its longest common prefix, as the single-reply path does.

This is a second llama.cpp context on the already loaded weights (no second copy of the model in memory); its KV
cache holds the prompt once plus every sequence's reply.
"""

from __future__ import annotations

import codecs
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from agents.models.loops import Loop

TOP_K, MIN_P = 40, 0.05
"""llama-cpp-python's defaults for a sampled chat completion (Llama._init_sampler), so a sampled sequence here
draws from the same distribution as a sampled single reply."""


@dataclass
class SeqSampling:
    """How one sequence samples: temperature 0 is greedy."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0


@dataclass
class SeqResult:
    """One sequence's reply as generated."""

    text: str
    tokens: int
    """Tokens generated (the end-of-turn token included when it ended the reply)."""
    finish: str
    """stop | length | repetition"""
    loop: Loop | None = None
    """The block of lines repeated at the reply's end that stopped it (agents/models/loops.py), if any."""
    first_token_s: float | None = None
    seconds: float = 0.0


@dataclass
class _Seq:
    """A sequence while it decodes."""

    sampler: Any
    decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"))
    parts: list[str] = field(default_factory=list)
    tokens: int = 0
    finish: str | None = None
    loop: Loop | None = None
    last: int = 0
    """The token sampled last (fed to the next step)."""
    first_token_s: float | None = None
    seconds: float = 0.0


class BatchedDecoder:
    """A llama.cpp context for up to `n_seq` sequences at once, on a loaded model (`llama_cpp.Llama`)."""

    def __init__(self, llm: Any, n_seq: int, n_ctx: int, n_threads: int, n_batch: int = 512):
        import llama_cpp

        self.lib = llama_cpp
        self.llm = llm
        self.n_seq = n_seq
        self.n_batch = n_batch
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.n_seq_max = n_seq
        params.kv_unified = True  # one KV buffer: the prompt's cells are shared by every sequence, not copied
        params.no_perf = False
        self.ctx = llama_cpp.llama_init_from_model(llm._model.model, params)
        if not self.ctx:
            raise RuntimeError(f"llama.cpp could not create a context for {n_seq} sequences of {n_ctx} tokens")
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        self.n_ctx = n_ctx
        self.batch = llama_cpp.llama_batch_init(max(n_batch, n_seq), 0, n_seq)
        self.cached: list[int] = []
        """The prompt tokens sequence 0 holds in the KV cache (what the next call may reuse)."""

    def close(self) -> None:
        """Free the batch and the context (the model stays loaded)."""
        if self.batch is not None:
            self.lib.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx:
            self.lib.llama_free(self.ctx)
            self.ctx = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- the prompt ----------------------------------------------------------------------------
    def _fill(self, items: list[tuple[int, int, int, bool]]) -> None:
        """Put (token, position, sequence, wants logits) items into the batch."""
        b = self.batch
        b.n_tokens = len(items)
        for i, (token, pos, seq, logits) in enumerate(items):
            b.token[i] = token
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = logits

    def _decode(self) -> None:
        rc = self.lib.llama_decode(self.ctx, self.batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc} (the KV cache of {self.n_ctx} tokens may be full)")

    def evaluate_prompt(self, tokens: list[int], beat: Callable[[str], None] | None = None) -> int:
        """Evaluate `tokens` on sequence 0, reusing the longest prefix already there; returns the reused count.
        The last token's logits are then at batch index `self.last_index`. beat("") is called before each batch of
        n_batch tokens (a time budget's guard raises there)."""
        lib = self.lib
        common = 0
        for a, b in zip(self.cached, tokens):
            if a != b:
                break
            common += 1
        common = min(common, len(tokens) - 1)  # at least one token is evaluated, for its logits
        for seq in range(1, self.n_seq):
            lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
        lib.llama_memory_seq_rm(self.memory, 0, common, -1)
        self.cached = tokens[:common]
        for start in range(common, len(tokens), self.n_batch):
            if beat is not None:
                beat("")
            chunk = tokens[start:start + self.n_batch]
            self._fill([(t, start + i, 0, start + i == len(tokens) - 1) for i, t in enumerate(chunk)])
            self._decode()
            self.last_index = len(chunk) - 1
            self.cached = tokens[:start + len(chunk)]  # a beat that stops the prompt keeps what was evaluated
        return common

    # -- the replies ---------------------------------------------------------------------------
    def _sampler(self, s: SeqSampling) -> Any:
        """llama.cpp's sampler chain for one sequence (greedy at temperature 0)."""
        lib = self.lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        if s.temperature <= 0:
            lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
            return chain
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_k(TOP_K))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_p(s.top_p, 1))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_min_p(MIN_P, 1))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(s.temperature))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_dist(s.seed & 0xFFFFFFFF))
        return chain

    def generate(self, tokens: list[int], samplings: list[SeqSampling], max_tokens: int,
                 on_token: Callable[[str], None] | None = None,
                 should_stop: Callable[[str, bool], Loop | bool | None] | None = None,
                 stop_at_eog: bool = True) -> tuple[list[SeqResult], int]:
        """One reply per sampling to the prompt `tokens`, decoded together; the first sequence's text streams to
        on_token, which gets an empty piece (a heartbeat) while the prompt is evaluated and at every step after the
        first sequence ended, so a sink that raises (a time budget's guard) stops the whole batch.
        should_stop(text, line_ended) says when a sequence loops (a Loop, or True for a short-piece loop).
        stop_at_eog=False decodes every sequence to max_tokens (the throughput benchmark's fixed work).
        Returns the replies and how many prompt tokens were reused from the cache."""
        if not 1 <= len(samplings) <= self.n_seq:
            raise ValueError(f"{len(samplings)} sequences asked of a context made for {self.n_seq}")
        lib = self.lib
        started = time.perf_counter()
        reused = self.evaluate_prompt(tokens, on_token)
        n = len(samplings)
        for seq in range(1, n):
            lib.llama_memory_seq_cp(self.memory, 0, seq, -1, -1)
        seqs = [_Seq(self._sampler(s)) for s in samplings]
        budget = max(1, min(max_tokens, (self.n_ctx - len(tokens)) // n - 1))
        try:
            index = {i: self.last_index for i in range(n)}  # every sequence samples from the prompt's last logits
            for step in range(budget):
                if on_token is not None and step and seqs[0].finish is not None:
                    on_token("")  # a heartbeat: the streamed reply ended, the others still decode
                live = [i for i in range(n) if seqs[i].finish is None]
                for i in live:
                    self._step(seqs[i], index[i], started, on_token if i == 0 else None, should_stop, stop_at_eog)
                live = [i for i in live if seqs[i].finish is None]
                if not live or step == budget - 1:
                    break
                pos = len(tokens) + step
                self._fill([(seqs[i].last, pos, i, True) for i in live])
                self._decode()
                index = {i: k for k, i in enumerate(live)}
        finally:
            for s in seqs:
                lib.llama_sampler_free(s.sampler)
            for seq in range(1, n):  # keep only the prompt, on sequence 0, for the next call
                lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
            lib.llama_memory_seq_rm(self.memory, 0, len(tokens), -1)
        ended = time.perf_counter() - started
        return [SeqResult("".join(s.parts) + s.decoder.decode(b"", final=True), s.tokens, s.finish or "length",
                          s.loop, s.first_token_s, round(s.seconds or ended, 4)) for s in seqs], reused

    def _step(self, s: _Seq, idx: int, started: float, on_token: Callable[[str], None] | None,
              should_stop: Callable[[str, bool], Loop | bool | None] | None, stop_at_eog: bool = True) -> None:
        """Sample one sequence's next token from batch index idx and take it (text, end of turn, loop)."""
        lib = self.lib
        token = lib.llama_sampler_sample(s.sampler, self.ctx, idx)
        s.tokens += 1
        s.last = token
        if s.first_token_s is None:
            s.first_token_s = round(time.perf_counter() - started, 4)
        if stop_at_eog and lib.llama_vocab_is_eog(self.vocab, token):
            s.finish, s.seconds = "stop", time.perf_counter() - started
            return
        piece = s.decoder.decode(self.llm._model.detokenize([token], special=False))
        if piece:
            s.parts.append(piece)
            if on_token:
                on_token(piece)
            if should_stop is not None:
                found = should_stop("".join(s.parts), "\n" in piece) if "\n" in piece or len(s.parts) % 16 == 0 \
                    else None
                if found:
                    s.loop = found if isinstance(found, Loop) else None
                    s.finish, s.seconds = "repetition", time.perf_counter() - started
                    return
