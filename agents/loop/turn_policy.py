"""The turn policy: every decision about a reply, in one place and in plain Python (no AG2 here).

One attempt is a conversation between the assistant and the sandbox proxy. A turn, top to bottom:

1. The assistant's reply (`assistant_reply`): sampled as the strategy says (greedy first, then sampled repairs). A
   reply that was cut off inside its code block, or (unattended) that holds only prose, is re-asked at once with a
   new seed, up to `max_resamples` times; a reply whose code already ran, up to `repeat_reasks` times (none by
   default: the attempt ends stuck). Each rejected reply is recorded, never run. No new turn starts once the run's
   time budget is spent.
2. The proxy's answer (`proxy_reply`): the conversation ends if the predicate holds or the reply limit is reached
   (AG2's own check, which also asks a person when one steers) -- but the last reply the limit allows still runs.
   Otherwise the reply runs in the sandbox and the proxy answers with what happened. A conversation stuck on code
   that already ran, or on the same prose after a nudge, ends after that answer: a fresh attempt takes over.
3. The assistant stops (`assistant_ends`) when the proxy's answer was the last one, or the predicate holds.

agents/loop/attempt.py builds one TurnPolicy per attempt; the AG2 agents' reply functions only call into it, and
agents/loop/ag2_adapter.py is where those calls are installed into AG2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from agents.feedback.feedback import Outcome
from agents.loop.budget import BudgetSpent, TimeBudget
from agents.loop.candidates import Candidate, choose, count_agreement, describe
from agents.loop.codeblocks import classify_reply, extract_code_blocks
from agents.loop.protocols import Display, ModelProvider, Recorder
from agents.loop.repeats import RepeatMemory
from agents.loop.status import StopReason
from agents.loop.strategy import SamplingPolicy, compact, reask_messages
from agents.models.loops import salvaged_loop
from agents.scenario.strategy_config import StrategyConfig

RejectReason = Literal["repeat", "cut", "no_code"]
"""Why a generated reply was re-asked instead of answered (`reply_rejected` events)."""
Role = Literal["execution", "user_proxy", "human"]
"""Who wrote a message the proxy sends: a report on code that ran, codeduet's own notice, or a person."""

ASSISTANT_LIMIT_HEADROOM = 10
"""AG2 counts the assistant's automatic replies as it counts the proxy's, and would end the conversation when the
assistant's count reaches its max_consecutive_auto_reply. The end is the proxy's decision (the reply limit with its
final turn, the predicate, a stuck conversation), so the assistant's limit is the proxy's plus this headroom, which
the proxy's decisions reach first when nobody steers. While a person steers (ALWAYS), AG2 does not count the
proxy's answers, and it is this limit that ends a conversation the person keeps going."""


@dataclass
class ProxyTurn:
    """A message the proxy produced, as it knows it: who wrote it and, for a report, what happened."""

    role: Role
    outcome: Outcome | None = None
    """What the reply's code did (None for a person's answer)."""
    review: Any = None
    """A team's QA report on that execution (agents/loop/team.py RoleTurn), sent in the same message; None without."""


@dataclass
class TurnPolicy:
    """Every decision about one attempt's replies: sampling and re-asks, running or not, stopping and why."""

    strategy: StrategyConfig
    attempt: int
    mode: str
    """human_input_mode: ALWAYS | TERMINATE | NEVER."""
    memory: RepeatMemory
    predicate: Callable[[dict[str, Any]], bool]
    """The scenario's termination predicate, bound to this attempt's RunContext."""
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(None))
    checks: int = 0
    """How many acceptance checks the scenario has (for the candidates' lines)."""
    sampling: SamplingPolicy = field(init=False)
    stop_reason: StopReason | None = None
    final_turn: bool = False
    """The proxy's next answer is the conversation's last (the reply limit, or a stuck conversation)."""
    candidates: int = 1
    """Replies generated together for the first turn (strategy.candidates, `auto` resolved by the model)."""
    replies: int | None = None
    """The proxy's reply limit (max_consecutive_auto_reply): with 0, turn 1 is the last, so nothing is deferred."""
    candidate_turn: int = 1
    """The turn those candidates are for: the first, or the second when the first turn's own reply only sent the
    given files back unchanged (an echo: the others, asked with the same prompt, mostly echo too; asked after the
    echo's report, they see what the checks say of the given code)."""
    reask_candidates: int = 1
    """Replies generated together for a re-ask (strategy.reask_candidates, `auto` resolved to `candidates`)."""
    run_candidates: Callable[[int, list[Candidate], int], None] | None = None
    """Runs a turn's candidates in their own sandboxes (agents/loop/candidates.py CandidateRunner); None: no
    candidates."""
    prose_seen: set[str] = field(default_factory=set)
    """Replies without code answered so far (whitespace-normalised): the same again after a nudge is a loop."""
    _decided: ProxyTurn | None = None
    """The proxy's last decision, until the message it produced is recorded (`sent`)."""

    def __post_init__(self) -> None:
        self.sampling = SamplingPolicy(self.strategy, self.attempt, reask_no_code=self.mode == "NEVER")

    # -- 1. the assistant's reply ----------------------------------------------------------------
    def assistant_reply(self, history: list[dict[str, Any]], generate: Callable[..., tuple[bool, Any]],
                        provider: ModelProvider, recorder: Recorder, display: Display, name: str,
                        system: str | None = None) -> tuple[bool, Any]:
        """Generate one turn's reply with `generate(messages, **sampling)` (or several candidates at once, the best
        kept); re-ask it while it must not be answered (a repeat, cut off, prose only when unattended); the kept
        one is returned as AG2 expects it. `system` is the assistant's system message (for candidates, which are
        asked of the provider directly)."""
        turn = self.sampling.next_turn()
        self.budget.check(f"before turn {turn} of attempt {self.attempt}")  # no new turn once the time is spent
        resamples, repeats = self.strategy.max_resamples, self.strategy.repeat_reasks
        history = compact(history, self.strategy.repair_context)
        asked = history
        for resample in range(max(resamples, repeats) + 1):
            sampling = self.sampling.sampling(turn, resample)
            params = provider.sampling_params(sampling.temperature, sampling.seed, self.strategy.top_p)
            n = self.candidates_for(turn, resample)
            if n > 1:
                messages = ([{"role": "system", "content": system}] if system else []) + list(asked)
                ok, text = True, self.best_candidate(turn, n, messages, provider, recorder, display, resample)
            else:
                ok, text = generate(asked, **params)
            content = text.get("content") if isinstance(text, dict) else text
            if ok and (salvaged := salvaged_loop(provider)) is not None:  # a loop of lines cut back to one copy
                recorder.event("reply_salvaged", attempt=self.attempt, turn=turn, resample=resample, **salvaged)
            earlier = self.memory.find(content) if ok else None
            reason = self.reject_reason(content, earlier) if ok else None
            if reason is None or resample >= (repeats if reason == "repeat" else resamples):
                if n == 1:  # a candidate's sampling is set by best_candidate
                    self.sampling.last = {**sampling.to_dict(), "resample": resample}
                return ok, text
            usage = provider.pop_usage()
            event: dict[str, Any] = {"reason": reason, "attempt": self.attempt, "turn": turn, "resample": resample,
                                     "sampling": sampling.to_dict(), "content": content}
            if earlier is not None:
                event["repeats"] = {"attempt": earlier.attempt, "turn": earlier.turn, "summary": earlier.summary}
            asked = reask_messages(history, reason, content, earlier, self.strategy)
            if asked is not history:
                event["follow_up"] = asked[-1]["content"]
            recorder.event("reply_rejected", **event, **({"usage": usage.to_dict()} if usage else {}))
            why = f"repeats code that already ran ({earlier.where})" if earlier is not None else \
                "was cut off inside its code block" if reason == "cut" else "holds only prose" + \
                (" (kept: the code it describes is asked for)" if "follow_up" in event else "")
            display.info(f"[dim]attempt {self.attempt} turn {turn}: the reply {why}; asking again (temperature "
                         f"{self.sampling.sampling(turn, resample + 1).temperature:.2f})[/]")
            display.generation_started(name)
        return False, None  # not reached: the last resample always returns

    def candidates_for(self, turn: int, resample: int = 0) -> int:
        """How many candidates this turn (or its re-ask) is asked for: the first turn's count, repair_candidates,
        or reask_candidates; 1 while a person steers (they approve what runs) or when nothing can run them."""
        if self.run_candidates is None or self.mode != "NEVER":
            return 1
        if resample:
            return self.reask_candidates
        if turn == self.candidate_turn:
            return self.candidates if turn == 1 else max(self.candidates, self.strategy.repair_candidates)
        return self.strategy.repair_candidates

    def best_candidate(self, turn: int, n: int, messages: list[dict[str, Any]], provider: ModelProvider,
                       recorder: Recorder, display: Display, resample: int = 0) -> str:
        """Ask for n replies, set aside those a single reply would be re-asked for, run the others each in its own
        sandbox, record every one, and return the best (agents/loop/candidates.py); the provider's last usage becomes
        the winner's, so the message records it. With candidates_early_stop (and checks to judge by), candidate 1
        runs first and the others are generated only when it does not pass every check."""
        samplings = [self.sampling.candidate(turn, k, resample) for k in range(n)]
        params = [provider.sampling_params(s.temperature, s.seed, self.strategy.top_p) for s in samplings]
        stages = [0, 1, n] if self.strategy.candidates_early_stop and self.checks else [0, n]
        found: list[Candidate] = []
        for start, stop in zip(stages, stages[1:]):
            # only the turn's own reply streams; the others still stop when the time budget is spent
            where = f"while generating candidates {start + 1}-{stop} of turn {turn} of attempt {self.attempt}"
            quiet = {"on_token": self.budget.guard(lambda _text: None, lambda where=where: where)} if start else {}
            try:
                replies = provider.complete_many(messages, params[start:stop], **quiet)
            except BudgetSpent:
                if not found:
                    raise
                found[0].budget_spent = True
                display.info(f"[dim]  the time budget ran out while candidates {start + 1}-{stop} were generated; "
                             f"going on with the {len(found)} that ran[/]")
                break
            batch = [Candidate(k + 1, text, samplings[k].to_dict(), usage)
                     for k, (text, usage) in zip(range(start, stop), replies)]
            for c in batch:
                c.rejected = self.reject_reason(c.content, self.memory.find(c.content))
                if c.usage is not None and "candidate" in c.usage.extra:
                    c.usage.extra.update(candidate=c.index, candidates=n)
            ran, more = sum(1 for c in batch if not c.rejected), stop - start
            display.info(f"[dim]attempt {self.attempt} turn {turn}{f' re-ask {resample}' if resample else ''}: " + (
                f"candidate 1 of {n} runs first, in its own sandbox" if more < n and start == 0 else
                (f"{n} candidates" if more == n else f"{more} more candidate{'s' if more > 1 else ''}")
                + f"; running {ran} of them, each in its own sandbox") + "[/]")
            assert self.run_candidates is not None
            self.run_candidates(turn, batch, resample)
            found += batch
            if found[0].score()[0]:  # candidate 1 passed every check: no need for the others
                if stop < n:
                    display.info(f"[dim]  candidate 1 passed every check; the other {n - stop} are not generated[/]")
                break
            if stop < n and (echoed := self.defer_candidates(turn, resample, found[0])):
                display.info(f"[dim]  candidate 1 sent {', '.join(echoed)} back unchanged; turn {turn + 1} gets the "
                             f"candidates instead, after its report[/]")
                break
        count_agreement(found)
        best = choose(found)
        checks = self.checks
        for c in found:
            recorder.event("candidate", attempt=self.attempt, turn=turn, candidates=n,
                           **({"resample": resample} if resample else {}), **c.to_event())
            display.info(f"[dim]  {describe(c, checks)}[/]")
        provider.last_usage = best.usage  # type: ignore[attr-defined]
        self.sampling.last = {**best.sampling, "resample": resample, "candidate": best.index, "candidates": n}
        return best.content

    def defer_candidates(self, turn: int, resample: int, first: Candidate) -> list[str]:
        """The files candidate 1 echoed when the first turn's candidates move to the next turn, else []: its own
        reply ran (it failed a check) and only sent the given files back unchanged, which the 1.5B model does in
        about half its first replies to a task about fixing a file, sampled or not (docs/BENCHMARKS.md); once, and
        only when a turn 2 can follow (the reply limit allows one, the time budget is not spent)."""
        if turn != 1 or resample or first.outcome is None or self.replies == 0 or self.budget.spent():
            return []
        echoed = self.memory.echoes(first.content)
        if echoed:
            self.candidate_turn = first.deferred = turn + 1
        return echoed

    def reject_reason(self, content: str, earlier: Any) -> RejectReason | None:
        """Why a reply must be asked again instead of answered, or None."""
        if earlier is not None:
            return "repeat"
        kind = classify_reply(content)
        if kind == "unclosed":
            return "cut"
        if self.sampling.reask_no_code and kind == "no_code" and "TERMINATE" not in content:
            return "no_code"
        return None

    # -- 2. the proxy's answer -------------------------------------------------------------------
    def proxy_reply(self, message: dict[str, Any], *, limit_hit: bool, ag2_check: Callable[[], tuple[bool, Any]],
                    person_answer: Callable[[], str | None],
                    run: Callable[[str], tuple[Outcome, Any]]) -> tuple[bool, Any]:
        """Decide the proxy's answer to the assistant's `message`: end the conversation (AG2's check: the predicate,
        the reply limit, a person's answer), or run the reply and report; returns AG2's (final, reply)."""
        content = message.get("content") or ""
        ends = self.predicate(message) and not extract_code_blocks(content)  # code with TERMINATE runs first
        if limit_hit and not ends and self.mode == "NEVER" and not self.final_turn and extract_code_blocks(content):
            # the last reply the limit allows still runs (a generated reply is never dropped unexecuted);
            # the assistant then ends the conversation on its report instead of asking the model again
            self.final_turn, self.stop_reason = True, "max_replies"
        else:
            final, reply = ag2_check()
            answered = person_answer()
            if final and reply is None and self.stop_reason is None:
                self.stop_reason = "human_exit" if answered is not None else \
                    "predicate" if ends else "max_replies" if limit_hit else "human_exit"
            if final:
                if reply is not None:  # a person answered (skip included): their answer goes instead of running
                    self._decided = ProxyTurn("human" if answered else "user_proxy")
                return final, reply
        outcome, review = run(content)
        self.after_run(outcome, content)
        self._decided = ProxyTurn("execution" if outcome.kind == "executed" else "user_proxy", outcome, review)
        return True, outcome.feedback

    def after_run(self, outcome: Outcome, content: str) -> None:
        """A conversation stuck on code that already ran (after its re-asks, if any), or on the same prose after a
        nudge, ends after this answer, so that a fresh attempt (if any is left) takes over. Not while a person
        steers."""
        stuck: StopReason | None = None
        if outcome.kind == "repeat":
            stuck = "stuck"
        elif outcome.kind == "no_code":
            key = " ".join(content.split())
            stuck = "prose_loop" if key in self.prose_seen else None
            self.prose_seen.add(key)
        if stuck and self.mode != "ALWAYS" and not self.final_turn:
            self.final_turn, self.stop_reason = True, stuck

    def sent(self) -> ProxyTurn | None:
        """What the proxy decided of the message it is sending now, handed over once: every message the proxy sends
        after the task is the answer its reply function just returned. None for the task."""
        decided, self._decided = self._decided, None
        return decided

    # -- 3. the assistant stops ------------------------------------------------------------------
    def assistant_ends(self, message: dict[str, Any]) -> bool:
        """The assistant's is_termination_msg: the proxy's answer was the last one, or the predicate holds."""
        return self.final_turn or self.predicate(message)
