"""One measured request: what was asked, when it ran (wall clock), and what the server said.

Records are raw: times are wall-clock seconds from the start of the suite (``time.perf_counter``),
token counts are the server's ``completion_tokens`` (never counted from text). A request that timed
out or failed is a record too (``ok`` false, ``error_kind`` and ``error`` set), never dropped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from ..config.wording import counted

#: ``error_kind`` values: the request took longer than the suite's timeout; the server answered with
#: an HTTP error; the TCP connection was refused; the server closed or reset the connection
#: mid-request; the answer was not what SGLang sends (no completion_tokens, bad JSON) or no finished
#: answer (no finish reason, or ``abort``).
ERROR_KINDS = ("timeout", "http", "connection", "disconnected", "protocol")


@dataclass
class RequestRecord:
    phase: str  #: "warmup", "single" or "sweep"
    prompt: str  #: the prompt's name in the suite
    max_tokens: int
    repeat: int = 0  #: which repeat of the row (single) or batch (sweep), from 0
    concurrency: int = 1  #: requests in flight together (1 outside the sweep)
    index: int = 0  #: position in the sweep batch
    start_s: float = 0.0  #: submission, wall seconds since the suite started
    end_s: float = 0.0  #: completion (or failure), wall seconds since the suite started
    ok: bool = False
    error_kind: str | None = None
    error: str | None = None
    #: a ``timeout`` whose answer did arrive, past the model-time limit (the simulator's sped-up
    #: clock); False for one that never got an answer (what the hang rules count)
    late: bool = False
    http_status: int | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    finish_reason: str | None = None
    spec_verify_ct: int | None = None  #: verify forward passes (speculative servers only)
    spec_accept_length: float | None = None  #: tokens per verify step, as the server reports it
    server_latency_s: float | None = None  #: the server's own e2e_latency, when it sends one
    #: the server's own first_token_latency (arrival to first token), when it sends one
    server_ttft_s: float | None = None
    ttft_s: float | None = None  #: time to first token (streaming only), wall seconds
    itl_s: list[float] = field(default_factory=list)  #: inter-token latencies (streaming), wall
    #: a stream whose every token came in the read that brought its first (sent in one write): no gap
    #: between its tokens was seen, so it has no ``itl_s`` and its TPOT is unknown (None), not 0
    gaps_unseen: bool = False
    #: the generated text (single requests only; the lossless check compares it with the baseline's)
    output_text: str | None = None

    def count_problem(self, ignore_eos: bool) -> str | None:
        """Why this answer's ``completion_tokens`` cannot be true, or None: a server answers at least
        one token (the prefill's) and at most ``max_tokens``, exactly ``max_tokens`` with
        ``ignore_eos``; and finish reason ``length`` only once it has the ``max_tokens`` asked, and no
        other reason with ``ignore_eos``."""
        n = self.completion_tokens
        if n is None or not 1 <= n <= self.max_tokens or (ignore_eos and n != self.max_tokens):
            rule = "exactly" if ignore_eos else "1 to"
            return f"completion_tokens {n}, {rule} {self.max_tokens} asked" + (" (ignore_eos)" if ignore_eos else "")
        if self.finish_reason == "length" and n < self.max_tokens:
            # SGLang 0.5.23 finishes "length" when the output reaches the request's max_new_tokens
            # (managers/schedule_batch.py update_finish_state), after its scheduler may have lowered it
            # (scheduler.py init_req_max_new_tokens: SGLANG_MAX_NEW_TOKENS_LIMIT, the context left,
            # the KV budget, which a draft model shrinks): fewer tokens with that reason is a request
            # the server cut, not the one asked (QA: exit 0 with a suite of ignore_eos false).
            return (f"completion_tokens {n} with finish_reason length, {self.max_tokens} asked: the "
                    "server lowered max_new_tokens (SGLANG_MAX_NEW_TOKENS_LIMIT, the context left or "
                    "its KV budget)")
        if ignore_eos and self.finish_reason not in (None, "length"):
            # SGLang 0.5.23 (managers/schedule_batch.py update_finish_state) skips the EOS and stop tokens
            # under ignore_eos (_check_token_based_finish) and the tuner sends no stop strings, so its
            # answer finishes "length" at max_new_tokens; the one "stop" left is "NaN happened"
            # (_check_vocab_boundary_finish), a broken generation (QA: "stop" with the count asked, exit 0)
            return (f"finish_reason {str(self.finish_reason)[:40]} with ignore_eos, where the "
                    f"{self.max_tokens} tokens asked finish length: the server did not generate the request "
                    "asked (or NaN happened)")
        return None

    def latency_problem(self) -> str | None:
        """Why this finished answer's server latency (SGLang's ``e2e_latency``) cannot be true, or
        None. The simulator's figures are in model time through it (:func:`model_duration_s`): a
        latency of 0 for a request that produced tokens would count the whole request at wall speed,
        and one longer than the client's own wall span (beyond clock granularity: the server's clock
        starts after the request arrived and stops before the answer left) is no measurement of it; nor is a
        ``first_token_latency`` outside the ``e2e_latency`` or longer than the client's own TTFT."""
        server_s = self.server_latency_s
        if server_s is None:
            return None
        wall_s = self.latency_s
        if server_s == 0 and (self.completion_tokens or 0) > 0:
            return f"e2e_latency 0 for {counted(self.completion_tokens, 'token')} cannot be true"
        if server_s > wall_s * 1.05 + 0.01:
            return f"e2e_latency {server_s:.4g} s is longer than the {wall_s:.4g} s the request took"
        first_s = self.server_ttft_s
        if first_s is None:
            return None
        if isinstance(first_s, bool) or not isinstance(first_s, (int, float)) or not 0 <= first_s <= server_s:
            # SGLang's first_token_time lies between its created_time and finished_time
            # (observability/req_time_stats.py): a first token after the end is no measurement of it
            return f"first_token_latency {first_s!r} s is not within the e2e_latency {server_s:.4g} s"
        if self.ttft_s is not None and first_s > self.ttft_s * 1.05 + 0.01:
            return (f"first_token_latency {first_s:.4g} s is longer than the {self.ttft_s:.4g} s the first "
                    "token took to come")
        return None

    @property
    def latency_s(self) -> float:
        """End-to-end wall latency seen by the client."""
        return self.end_s - self.start_s

    @property
    def tok_per_s(self) -> float | None:
        """Wall tok/s of this request: completion_tokens / end-to-end latency."""
        if not self.ok or not self.completion_tokens or self.latency_s <= 0:
            return None
        return self.completion_tokens / self.latency_s

    def model_latency_s(self, scale: float) -> float:
        """End-to-end latency in model seconds, on a server whose clock runs ``scale`` model seconds
        per wall second (:func:`model_duration_s` with the server's own ``e2e_latency``)."""
        server = self.server_latency_s if self.ok else None
        return model_duration_s(self.latency_s, server, scale)

    def model_tok_per_s(self, scale: float) -> float | None:
        """Model tok/s of this request: completion_tokens / :meth:`model_latency_s`."""
        if self.tok_per_s is None:
            return None
        return self.completion_tokens / self.model_latency_s(scale)

    def model_ttft_s(self, scale: float) -> float | None:
        """Time to first token in model seconds (None without one), on a server whose clock runs
        ``scale`` model seconds per wall second. As for :meth:`model_latency_s`, the wall time
        outside the server's clock (loopback HTTP) is counted as it is and only the rest multiplied:
        multiplied whole, a 2 ms loopback cost read as 80 model ms of TTFT at ``--sim-speedup 40`` (and
        so against a ``ttft`` SLO) on a server whose own TTFT was a few hundred. The server's part is
        its own ``first_token_latency`` when it sends one (the simulator does), as
        :func:`model_duration_s` takes it. Else it is the TTFT less the whole request's wall latency
        beyond its ``e2e_latency``, the first token paying the way in and out as the last does: an
        estimate whose error (the end's delivery lag and the client's read of ``[DONE]``, a few wall ms
        on a loaded machine) is multiplied too, and can pass the whole TTFT (QA: 2.2 to 50 model ms
        between runs at 40x for one request). Without the server's latency the whole TTFT is
        multiplied."""
        if self.ttft_s is None:
            return None
        server = self.server_latency_s if self.ok else None
        if scale == 1.0 or server is None:
            return self.ttft_s * scale
        if self.server_ttft_s is not None:
            return model_duration_s(self.ttft_s, self.server_ttft_s, scale)
        outside = max(self.latency_s - server, 0.0)
        return model_duration_s(self.ttft_s, max(self.ttft_s - outside, 0.0), scale)

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first, wall seconds (SGLang's ``benchmark/goodput.py``:
        ``(latency - ttft) / (output_len - 1)``; 0 for a one-token answer); None without a TTFT, or
        when no gap between the tokens was seen (:attr:`gaps_unseen`)."""
        if not self.ok or self.ttft_s is None or not self.completion_tokens or self.gaps_unseen:
            return None
        if self.completion_tokens <= 1:
            return 0.0
        return (self.latency_s - self.ttft_s) / (self.completion_tokens - 1)

    @property
    def accept_length(self) -> float | None:
        """Tokens per verify step: completion_tokens / spec_verify_ct, else the server's figure."""
        if not self.ok:
            return None
        if self.spec_verify_ct and self.completion_tokens:
            return self.completion_tokens / self.spec_verify_ct
        return self.spec_accept_length

    def to_dict(self) -> dict:
        d = asdict(self)
        d["itl_s"] = [round(x, 7) for x in self.itl_s]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RequestRecord":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def model_duration_s(wall_s: float, server_s: float | None, scale: float) -> float:
    """A wall duration in model seconds, on a server whose clock runs ``scale`` model seconds per
    wall second (the simulator's ``sim_speedup``; 1 on SGLang).

    Only the part the server's own clock accounts for (``server_s``, its ``e2e_latency``) runs
    faster; the rest (loopback HTTP, JSON, the client's event loop) takes the wall time it would
    take against a real server, so it is counted as it is, not multiplied by ``scale``: a few
    milliseconds per request would otherwise grow to a few percent of a figure at 40x, and a
    study's outcome would depend on the speedup. Without ``server_s`` (a failed request, a server
    that does not say) the whole duration is scaled.
    """
    if scale == 1.0 or server_s is None:
        return wall_s * scale
    inside = min(max(server_s, 0.0), wall_s)
    return inside * scale + (wall_s - inside)


def prompt_token_counts(records) -> dict[str, int]:
    """``{prompt name: prompt_tokens}`` of the answered ``records``, the first answer's count each; a
    prompt no answer counted (an older result, a server that does not say) is left out. One server
    counts a prompt alike every time (SGLang 0.5.23: the length of its token ids,
    ``managers/tokenizer_manager.py``; a prefix-cache hit is ``cached_tokens``)."""
    counts: dict[str, int] = {}
    for r in records:
        if r.ok and isinstance(r.prompt_tokens, int):
            counts.setdefault(r.prompt, r.prompt_tokens)
    return counts


def other_token_count(theirs: dict, mine: dict[str, int]) -> tuple[str, int, int] | None:
    """The first prompt of ``mine`` that ``theirs`` (another run's :func:`prompt_token_counts`, maybe
    read back from storage) counts as another number of tokens: ``(prompt, theirs, mine)``; None when
    every prompt both count agrees. Another count is another tokenizer, chat template or model."""
    for prompt, n in mine.items():
        said = theirs.get(prompt) if isinstance(theirs, dict) else None
        if isinstance(said, int) and said != n:
            return prompt, said, n
    return None
