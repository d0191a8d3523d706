"""Benchmark: our LlamaCppClient against raw llama_cpp.Llama.create_chat_completion on the same prompt."""

from __future__ import annotations

import os
import resource
import statistics
import time
from typing import Any

SYSTEM = ("You are a careful Python programmer. Answer with one complete Python script in a single ```python "
          "block. The script must print its results. Say TERMINATE only after the code ran successfully.")
TASK = ("Write a function is_prime(n) and use it to print every prime below 50, then print how many there are. "
        "Include a few assert statements that check edge cases such as 0, 1 and 2.")
FOLLOW_UP = "The script ran. Now also print the sum of those primes."


def _raw_run(model: Any, messages: list[dict[str, str]], tokens: int, max_tokens: int) -> dict[str, Any]:
    """One cold-cache streamed completion straight through llama_cpp."""
    llm = model.llm
    llm.reset()
    started = time.perf_counter()
    first, finish, parts = None, None, []
    for chunk in llm.create_chat_completion(messages=messages, stream=True, max_tokens=max_tokens,
                                            temperature=0.0, top_p=1.0, seed=0):
        choice = chunk["choices"][0]
        finish = choice.get("finish_reason") or finish
        text = choice.get("delta", {}).get("content") or ""
        if text:
            first = first if first is not None else time.perf_counter() - started
            parts.append(text)
    total = time.perf_counter() - started
    completion = max(0, llm.n_tokens - tokens) + (1 if finish == "length" else 0)
    return {"text": "".join(parts), "completion_tokens": completion, "seconds": total, "ttft_s": first or total}


def _ours_run(client: Any, messages: list[dict[str, str]], max_tokens: int) -> tuple[dict[str, Any], Any]:
    """One cold-cache completion through LlamaCppClient.create (what AG2 calls)."""
    client.provider.model().llm.reset()
    response = client.create({"messages": messages, "max_tokens": max_tokens})
    usage = response.codeduet_usage
    return ({"text": response.choices[0].message.content, "completion_tokens": usage.completion_tokens,
             "seconds": usage.seconds, "ttft_s": usage.first_token_s or usage.seconds}, usage)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over runs: tokens/s end to end and while decoding, TTFT, total time."""
    def med(key: str) -> float:
        return round(statistics.median(r[key] for r in runs), 3)

    for r in runs:
        r["tok_s"] = r["completion_tokens"] / r["seconds"]
        r["decode_tok_s"] = max(0, r["completion_tokens"] - 1) / max(1e-9, r["seconds"] - r["ttft_s"])
    return {"completion_tokens": int(med("completion_tokens")), "tok_s": med("tok_s"),
            "decode_tok_s": med("decode_tok_s"), "ttft_s": med("ttft_s"), "seconds": med("seconds")}


def main(console: Any = None, *, repeats: int = 2, max_tokens: int = 256) -> dict[str, Any]:
    """Run the benchmark, print a table, and return the numbers."""
    from rich.console import Console
    from rich.table import Table

    from agents.models import download
    from agents.models.config import build_provider
    from agents.models.llama_cpp import LlamaCppClient, load_model, prompt_tokens

    console = console or Console()
    path = download.pull_model(console=console)
    provider = build_provider({"name": "bench", "provider": "llama_cpp", "model_path": str(path),
                               "max_tokens": max_tokens, "temperature": 0.0, "seed": 0})
    provider.check_ready()
    model = load_model(path, provider.config.n_ctx, provider.n_threads)
    client = LlamaCppClient({}, provider)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    n_prompt = len(prompt_tokens(model, messages))
    ours, raw = [], []
    for i in range(repeats):  # interleaved so drift (heat, other load) hits both sides alike
        raw.append(_raw_run(model, messages, n_prompt, max_tokens))
        ours.append(_ours_run(client, messages, max_tokens)[0])
        console.print(f"run {i + 1}/{repeats}: raw {raw[-1]['completion_tokens']} tokens in "
                      f"{raw[-1]['seconds']:.1f} s, "
                      f"ours {ours[-1]['completion_tokens']} tokens in {ours[-1]['seconds']:.1f} s")
    result: dict[str, Any] = {"model_path": str(path), "n_threads": provider.n_threads, "n_ctx": provider.config.n_ctx,
                              "load_s": model.load_s, "prompt_tokens": n_prompt, "max_tokens": max_tokens,
                              "repeats": repeats, "raw": _summary(raw), "ours": _summary(ours),
                              "same_output": ours[-1]["text"] == raw[-1]["text"]}
    result["ratio_tok_s"] = round(result["ours"]["tok_s"] / max(1e-9, result["raw"]["tok_s"]), 3)
    # turn 2 of the same conversation: how much of the prompt is served from the KV cache
    first, turn1 = _ours_run(client, messages, max_tokens)
    follow = messages + [{"role": "assistant", "content": first["text"]}, {"role": "user", "content": FOLLOW_UP}]
    turn2 = client.create({"messages": follow, "max_tokens": max_tokens}).codeduet_usage
    result["turn2"] = {key: {"prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens,
                             "prompt_eval_tokens": u.extra.get("prompt_eval_tokens"),
                             "prompt_eval_s": u.extra.get("prompt_eval_s"), "ttft_s": u.first_token_s}
                       for key, u in (("turn1", turn1), ("turn2", turn2))}
    result["loadavg_1m"] = round(os.getloadavg()[0], 2)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    table = Table(title=f"LLM throughput ({n_prompt}-token first turn, {max_tokens} max new tokens, "
                        f"{provider.n_threads} threads, median of {repeats})")
    for col in ("path", "tokens", "tok/s", "decode tok/s", "TTFT s", "total s"):
        table.add_column(col, justify="right")
    for label in ("raw", "ours"):
        s = result[label]
        table.add_row("raw llama_cpp" if label == "raw" else "LlamaCppClient", str(s["completion_tokens"]),
                      f"{s['tok_s']:.2f}", f"{s['decode_tok_s']:.2f}", f"{s['ttft_s']:.2f}", f"{s['seconds']:.2f}")
    console.print(table)
    t1, t2 = result["turn2"]["turn1"], result["turn2"]["turn2"]
    console.print(f"ratio ours/raw {result['ratio_tok_s']:.3f}; same text: {result['same_output']}; model load "
                  f"{model.load_s:.2f} s; peak RSS {result['peak_rss_mb']} MB; load average {result['loadavg_1m']}")
    console.print(f"turn 1: {t1['prompt_tokens']} prompt tokens, {t1['prompt_eval_tokens']} evaluated, TTFT "
                  f"{t1['ttft_s']} s; turn 2: {t2['prompt_tokens']} prompt tokens, {t2['cached_tokens']} from the "
                  f"cache, {t2['prompt_eval_tokens']} evaluated, TTFT {t2['ttft_s']} s")
    return result
