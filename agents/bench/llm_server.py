"""Benchmark: the embedded model in-process against the same GGUF behind llama.cpp's OpenAI-compatible server.

    codeduet bench llm --server [--repeats 3] [--max-tokens 256]

Same prompt, greedy, same threads and context. Request 1 of each side is cold (the prompt evaluated), the others
warm (the prompt served from the KV cache both sides keep). The server side is what the `llamacpp-server` entry
sees: HTTP, SSE framing and JSON per token, through the product's own OpenAI provider.
"""

from __future__ import annotations

import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.bench.llm_throughput import SYSTEM, TASK


def _row(text: str, usage: Any) -> dict[str, Any]:
    """One request: tokens, seconds, TTFT, tok/s."""
    ttft = usage.first_token_s or usage.seconds
    tokens = usage.completion_tokens or 0
    return {"text": text, "completion_tokens": tokens, "seconds": usage.seconds, "ttft_s": ttft,
            "tok_s": tokens / max(1e-9, usage.seconds),
            "decode_tok_s": max(0, tokens - 1) / max(1e-9, usage.seconds - ttft)}


def _side(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Cold = the first request; warm = the median of the others."""
    warm = rows[1:] or rows
    med = {k: round(statistics.median(r[k] for r in warm), 3) for k in ("ttft_s", "tok_s", "decode_tok_s", "seconds")}
    return {"cold_ttft_s": round(rows[0]["ttft_s"], 3), "cold_seconds": round(rows[0]["seconds"], 3),
            "warm": med, "completion_tokens": rows[0]["completion_tokens"], "requests": len(rows)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(console: Any = None, *, repeats: int = 3, max_tokens: int = 256) -> dict[str, Any]:
    """Run both sides one after the other (never at once), print a table, return the numbers."""
    from rich.console import Console
    from rich.table import Table

    from agents.models import download
    from agents.models.config import build_provider
    from agents.models.llama_cpp import LlamaCppClient
    from agents.models.server import MODEL_ALIAS, LlamaServer

    console = console or Console()
    path = download.pull_model(console=console)
    threads = os.cpu_count() or 1
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]

    local = build_provider({"name": "bench", "provider": "llama_cpp", "model_path": str(path), "n_threads": threads,
                            "max_tokens": max_tokens, "temperature": 0.0, "seed": 0})
    local.check_ready()
    client = LlamaCppClient({}, local)
    local.model().llm.reset()
    inproc = []
    for i in range(repeats):
        response = client.create({"messages": messages, "max_tokens": max_tokens})
        inproc.append(_row(response.choices[0].message.content, response.codeduet_usage))
        console.print(f"in-process {i + 1}/{repeats}: {inproc[-1]['completion_tokens']} tokens, "
                      f"TTFT {inproc[-1]['ttft_s']:.2f} s, {inproc[-1]['seconds']:.1f} s")

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        server = LlamaServer(path, port=_free_port(), n_ctx=local.config.n_ctx, n_threads=threads,
                             log=Path(tmp) / "server.log")
        with server, console.status("llama.cpp's server is starting…"):
            ready_s = time.perf_counter() - started
            remote = build_provider({"name": "bench-server", "provider": "openai", "model": MODEL_ALIAS,
                                     "base_url": server.base_url, "api_key_optional": True, "temperature": 0.0,
                                     "max_tokens": max_tokens})
            served = []
            for i in range(repeats):
                text, usage = remote.chat(messages, temperature=0.0, max_tokens=max_tokens)
                served.append(_row(text, usage))
                console.print(f"server {i + 1}/{repeats}: {served[-1]['completion_tokens']} tokens, "
                              f"TTFT {served[-1]['ttft_s']:.2f} s, {served[-1]['seconds']:.1f} s")
    result = {"model_path": str(path), "n_threads": threads, "n_ctx": local.config.n_ctx, "max_tokens": max_tokens,
              "in_process": _side(inproc), "server": _side(served), "server_ready_s": round(ready_s, 2),
              "same_text": inproc[0]["text"] == served[0]["text"], "loadavg_1m": round(os.getloadavg()[0], 2)}
    table = Table(title=f"the same prompt, greedy, {threads} threads, {max_tokens} max new tokens")
    for col in ("path", "tokens", "cold TTFT s", "warm TTFT s", "warm tok/s", "warm decode tok/s"):
        table.add_column(col, justify="right")
    for label, key in (("in-process (local)", "in_process"), ("llama.cpp server (llamacpp-server)", "server")):
        s = result[key]
        table.add_row(label, str(s["completion_tokens"]), f"{s['cold_ttft_s']:.2f}", f"{s['warm']['ttft_s']:.2f}",
                      f"{s['warm']['tok_s']:.2f}", f"{s['warm']['decode_tok_s']:.2f}")
    console.print(table)
    console.print(f"server ready after {result['server_ready_s']} s; same text: {result['same_text']}; "
                  f"load average {result['loadavg_1m']}")
    return result
