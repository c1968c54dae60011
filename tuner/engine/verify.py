"""Trust, verified: what a launched server told the tuner, checked before its figures may count.

A measurement's figures join the study only when the server showed that it ran what the tuner
launched, on the clock the tuner assumes, and answered what was asked. :func:`verify_result` returns
the first failure, as ``(failure_class, message)``, or None:

``args_unverified``: the server cannot show what it runs.
  * no ``/server_info`` (nor ``/get_server_info``);
  * a trial whose ``/server_info`` lacks the speculative args (``speculative_algorithm`` and the three
    flags, as integers) or a baseline whose ``/server_info`` lacks ``speculative_algorithm``: SGLang
    0.5.23 always reports them (``ServerArgs.resolved_dict()``, None when unset);
  * the simulator (``backend: sim``) without its ``sim_speedup``.
``args_mismatch``: the server shows that it runs something else.
  * other speculative flags or another algorithm than the trial's effective setting (SGLang's own
    rewrites are applied before launch, :mod:`tuner.sglang.rules`);
  * a trial's server running no speculative algorithm; a baseline's server running one, or answering
    with verify steps (``spec_verify_ct``, or ``spec_accept_length`` alone, which SGLang sends only when
    speculating: ``managers/tokenizer_manager.py``, ``_calculate_spec_decoding_metrics``);
  * another model than launched: ``model_path`` (a trial's ``speculative_draft_model_path`` too) other
    than the launch's, when the server says it;
  * another time scale than launched: the simulator's ``sim_speedup`` differs from
    ``server.sim.speedup``, or a server launched as SGLang says it is the simulator.
  * a ``/server_info`` that changed during the suite (read again after it, :func:`changed_problem`):
    part of the suite was answered by another server than the one verified.
``bad_response``: answers that cannot be true.
  * the simulator stood :data:`STALL_WALL_S` or more behind model time while it was measured (its
    ``sim_timekeeping``, read after the suite): frozen or starved, every answer came late;
  * a single request that waited :data:`OUTSIDE_WALL_S` or more outside the server's clock (its wall
    latency minus its ``e2e_latency``): the tuner or the server's HTTP layer stood still;
  * a completion-token count outside 1 to ``max_tokens``; with ``ignore_eos`` (the suites' default),
    any other count than ``max_tokens`` (:meth:`tuner.bench.records.RequestRecord.count_problem`);
  * an accept length beyond what a draft of ``num_steps`` can give: SGLang's accept length is
    ``completion_tokens / spec_verify_ct`` (tokenizer_manager.py), where the first token comes from
    the prefill and each verify step commits between 1 and ``num_steps + 1`` tokens
    (``speculative/eagle_worker.py``: the drafted path plus the bonus token), and no more than
    ``num_draft_tokens`` when that is fewer (a tree verifies its root and ``num_draft_tokens - 1``
    candidates: :func:`_per_step`), so
    ``spec_verify_ct <= completion_tokens <= 1 + spec_verify_ct * (num_steps + 1)``: an accept length
    of at least 1 and at most ``num_steps + 1 + 1 / spec_verify_ct`` (the prefill's one token over
    ``spec_verify_ct``). A server that reports only ``spec_accept_length`` (no ``spec_verify_ct``) is
    held to the loosest form of that bound, ``num_steps + 2`` (one verify step): a short answer's
    prefill token weighs most.

How an SGLang server has time scale 1: the tuner launched ``python -m sglang.launch_server`` itself
(``server.backend: sglang``), and its ``/server_info`` carries none of the simulator's marks
(``sim_speedup``, ``sim_profile``, a ``+sim`` version): a server that is SGLang runs in wall time. The
simulator's scale is its own ``sim_speedup``, which must be the ``--sim-speedup`` it was launched with.
"""

from __future__ import annotations

import math
import os

from ..bench.result import first_internal_state, resolved_spec_from_info, says_simulator, spec_flags_said
from ..config.landscape import most_accepted
from ..config.study import StudyConfig
from ..config.wording import counted
from ..sglang.rules import SpecConfig

Failure = tuple[str, str]


def verify_result(result, spec: SpecConfig | None, config: StudyConfig, algorithm: str) -> Failure | None:
    """The first reason ``result`` (a :class:`tuner.bench.SuiteResult` from the server launched for
    ``spec``; None: the baseline) cannot be trusted, or None."""
    info = result.server_info
    if not isinstance(info, dict):
        return "args_unverified", ("the server has no /server_info: what it runs (speculative args, time "
                                   "scale) cannot be verified, so its figures cannot count")
    return (_time_scale(result, info, config) or _model(info, spec, config)
            or _speculation(info, spec, algorithm) or changed_problem(result) or _responses(result, spec)
            or clock_problem(result))


#: What a server runs, as ``/server_info`` says it (read where :func:`tuner.bench.result.
#: resolved_spec_from_info` reads the flags: the scheduler's ``internal_states`` first): the same
#: server says the same all its life. SGLang 0.5.23 reports the arguments it was started with
#: (``http_server.py`` ``server_info``: "the startup configuration"); what changes while it runs
#: (``internal_states``' throughput and accept length, the simulator's ``status``,
#: ``sim_running_requests`` and ``sim_timekeeping``) is not compared.
IDENTITY_KEYS = ("model_path", "speculative_draft_model_path", "speculative_algorithm",
                 "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
                 "tp_size", "version", "sim_speedup", "sim_profile")


def _identity(info: dict) -> dict:
    state = first_internal_state(info)
    return {k: state[k] if k in state else info[k] for k in IDENTITY_KEYS if k in state or k in info}


def changed_problem(result) -> Failure | None:
    """A server whose ``/server_info`` at the end of the suite (``server_info_after``, read again by
    the runner) says another model, other speculative flags, another version or time scale than at
    its start: part of the suite was answered by another server (one restarted on the port with other
    arguments by a supervisor or a person; QA: a server that said ``3-1-4`` at the start and ``4-1-4``
    at the end was measured and shown as ``3-1-4``, `tuner bench` exit 0), so the figures are of no
    one setting, and the time scale the figures were converted with may be wrong. ``args_mismatch``:
    the server showed that it ran something else than what was verified. Not judged: a key either
    reading does not say, and a server that did not answer at the end."""
    before, after = getattr(result, "server_info", None), getattr(result, "server_info_after", None)
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    was, now = _identity(before), _identity(after)
    changed = [k for k in IDENTITY_KEYS if k in was and k in now and was[k] != now[k]]
    if not changed:
        return None
    said = "; ".join(f"{k} {was[k]!r} at its start, {now[k]!r} at its end" for k in changed[:3])
    return "args_mismatch", (f"the server's /server_info changed during the suite ({said}): another server, "
                             "or one restarted with other arguments, answered part of it, so its figures "
                             "are of no one setting; measure it again")


#: The simulator standing this long (wall) behind model time distorts a measurement: every answer
#: then comes late by it, times its speedup in model time. Scheduler jitter on a loaded machine is
#: milliseconds; a frozen (SIGSTOP) or starved server is seconds.
STALL_WALL_S = 2.0


def clock_problem(result) -> Failure | None:
    """Whether ``result``'s clock (or server) cannot be trusted, whoever launched its server: a
    ``/server_info`` that changed during the suite (:func:`changed_problem`), the simulator's own
    account of standing behind model time (:func:`_kept_time`), or a single request that waited
    outside the server's clock (:func:`_waited_outside`). ``tuner bench`` applies these: it has
    no launch to check the server's args against, but a frozen server's figures are distorted
    whatever it runs, and a server that changed mid-suite measured no one setting."""
    return changed_problem(result) or _kept_time(result) or _waited_outside(result)


def _timekeeping(result) -> dict | None:
    """The simulator's own account of model time, read after the suite (``sim_timekeeping``;
    None: not the simulator, or it did not answer)."""
    kept = getattr(result, "timekeeping", None)
    return kept if isinstance(kept, dict) else None


def _kept_time(result) -> Failure | None:
    """The simulator's own account, read after the suite (``sim_timekeeping``): a delivery that
    came ``STALL_WALL_S`` or more behind its model instant fails the measurement (QA: a server
    frozen 8 s mid-sweep read 0.69x for a setting that reads 0.93x, and joined the front)."""
    kept = _timekeeping(result)
    if kept is None:
        return None
    lag_ms = kept.get("max_lag_wall_ms")
    if isinstance(lag_ms, bool) or not isinstance(lag_ms, (int, float)) or lag_ms < STALL_WALL_S * 1000:
        return None
    return "bad_response", (f"the simulator stood {lag_ms / 1000:.3g} s (wall) behind model time while it was "
                            f"measured ({kept.get('late_deliveries')} of {kept.get('deliveries')} answers late): "
                            "a frozen or starved server, its figures distorted")


#: An answer that took this long (wall) beyond the server's own account of it (its ``e2e_latency``)
#: waited outside the server's clock, unread: normally loopback HTTP and JSON, milliseconds.
OUTSIDE_WALL_S = STALL_WALL_S


def _outside_waits(result) -> list:
    """``(record, wall seconds outside the server's clock)`` of every single request that says its
    latency. Single requests only: one is in flight at a time, so nothing of the server's own work
    comes before its clock starts; in a sweep batch a request's clock starts once the HTTP process
    has taken it, after its batch-mates' (SGLang tokenizes in that process: long prompts at a high
    concurrency queue there for seconds, honestly)."""
    return [(r, r.latency_s - r.server_latency_s) for r in getattr(result, "records", None) or []
            if r.ok and r.server_latency_s is not None and r.phase == "single"]


def longest_outside_wait_s(result) -> float:
    """The longest wall time a request of ``result`` (a suite result, or None) may have spent outside
    the server's own clock: its wall latency minus its ``e2e_latency``, or its whole wall latency
    when the server does not say (OpenAI answers carry none; a request that failed). The stall
    watch compares it with its own gap (:meth:`tuner.engine.stall.StallWatch.check`): a wait the
    tuner's own pause explains is the tuner's, not the server's."""
    records = getattr(result, "records", None) or []
    return max((r.latency_s - ((r.server_latency_s or 0.0) if r.ok else 0.0) for r in records), default=0.0)


def _waited_outside(result) -> Failure | None:
    """A single request's answer that spent :data:`OUTSIDE_WALL_S` or more of its wall latency outside
    the server's own clock (SGLang's ``e2e_latency`` runs from the request's arrival to its answer,
    ``managers/tokenizer_manager.py``; the simulator's likewise) fails the measurement: the tuner
    stood still before reading it (a pause under the stall watch's ``TUNER_STALL_S``), or the server's
    HTTP layer did before taking it; those seconds count as the server's in every figure
    (:func:`tuner.bench.records.model_duration_s`). QA: the tuner paused 8 s during the baseline's
    single requests read the baseline 20% slow, and a trial's single speedup 2.87 instead of 2.29
    joined the front."""
    waits = _outside_waits(result)
    late = [(r, w) for r, w in waits if w >= OUTSIDE_WALL_S]
    if not late:
        return None
    r, w = max(late, key=lambda rw: rw[1])
    return "bad_response", (
        f"{len(late)} of {len(waits)} single requests waited {OUTSIDE_WALL_S:g} s or more outside the "
        f"server's own clock (the longest: {r.phase} {r.prompt} at {r.max_tokens} tokens, {w:.3g} s of its "
        f"{r.latency_s:.3g} s beyond its e2e_latency): the tuner or the server's HTTP layer stood still, and "
        "that wait would count as the server's time; measure it again")


def behind_note(result) -> str | None:
    """A simulator that fell behind model time without stalling (its own ``fell_behind``: more than
    1% of its answers late by more than 3% of their age, :mod:`tuner.sim.streaming`), said rather
    than failed: figures read at a ``server.sim.speedup`` the machine cannot keep are distorted
    (QA: at 1000x a baseline read 17% slow at C=32), but a loaded machine's honest runs come close
    to that rule too, and a failed trial per busy second would end a night's study."""
    kept = _timekeeping(result)
    if kept is None or kept.get("fell_behind") is not True:
        return None
    late, of = kept.get("late_deliveries"), kept.get("deliveries")
    return (f"the simulator fell behind model time ({late} of {of} answers late, by up to "
            f"{kept.get('max_lag_wall_ms')} ms wall): its figures are distorted; "
            "lower server.sim.speedup or the machine's load")


def _time_scale(result, info: dict, config: StudyConfig) -> Failure | None:
    if config.server.backend == "sglang":
        if says_simulator(info):
            return "args_mismatch", ("launched as SGLang, the server's /server_info says it is the simulator "
                                     f"(sim_speedup {info.get('sim_speedup')!r}): its clock is not wall time")
        return None
    launched = config.server.sim.speedup
    if "sim_speedup" not in info:  # (a malformed one never gets here: tuner.bench.ServerInfoError)
        return "args_unverified", (f"the simulator's /server_info has no sim_speedup: its time scale "
                                   f"(launched at {launched:g}) cannot be verified")
    if not math.isclose(result.time_scale, launched, rel_tol=1e-9):
        return "args_mismatch", (f"the simulator reports sim_speedup {info['sim_speedup']!r}, launched "
                                 f"with --sim-speedup {launched:g}: its figures would be converted to "
                                 "model time wrongly")
    return None


def _model(info: dict, spec: SpecConfig | None, config: StudyConfig) -> Failure | None:
    """A server whose ``/server_info`` names another model (or, for a trial, another draft model) than
    the launch's ``--model-path`` (``--speculative-draft-model-path``) measured another model. SGLang
    0.5.23 reports both as the server was started (``http_server.py`` ``server_info``: "the startup
    configuration", ``build_server_info``; the live model after a weight update is ``/model_info``'s).
    Not said (a server that leaves the key out, or null): nothing to compare, as before."""
    pairs = [("model_path", "--model-path", config.server.model_path)]
    if spec is not None and config.server.draft_model_path:
        pairs.append(("speculative_draft_model_path", "--speculative-draft-model-path",
                      config.server.draft_model_path))
    for key, flag, launched in pairs:
        said = info.get(key)
        if isinstance(said, str) and said != launched and not _downloaded_as(launched, said):
            return "args_mismatch", (f"the server's /server_info says {key} {said!r}, launched with {flag} "
                                     f"{launched!r}: its figures are another model's")
    return None


def _downloaded_as(launched: str, said: str) -> bool:
    """Whether ``said`` may be SGLang's own resolution of ``launched``: SGLang 0.5.23 replaces a model
    path that is no local path (a Hub or ModelScope name) by the local files it downloaded and reports
    those (``arg_groups/model_path_hook.py``: ``resolve_hf_gguf_model_path`` for a Hub ``.gguf``,
    ``handle_modelscope_paths`` under ``SGLANG_USE_MODELSCOPE``); a path that exists it keeps as given.
    The tuner and its server share the node, so both paths are checked here."""
    return not os.path.exists(launched) and os.path.exists(said)


def _speculation(info: dict, spec: SpecConfig | None, algorithm: str) -> Failure | None:
    state = first_internal_state(info)
    if "speculative_algorithm" not in state and "speculative_algorithm" not in info:
        return "args_unverified", ("/server_info has no speculative_algorithm: whether the server speculates "
                                   "cannot be verified")
    running = state.get("speculative_algorithm", info.get("speculative_algorithm"))
    if spec is None:
        if running:
            return "args_mismatch", (f"the baseline's server runs speculative decoding ({running}): an "
                                     "autoregressive baseline was launched")
        return None
    if not running:
        return "args_mismatch", (f"asked for {algorithm} {spec.label()}, the server runs without speculative "
                                 "decoding")
    ran = resolved_spec_from_info(info)
    if ran is None:
        return "args_unverified", (f"/server_info does not report the speculative flags as integers "
                                   f"({spec_flags_said(info)}): {spec.label()} cannot be verified")
    if str(running) != algorithm or ran != spec:
        return "args_mismatch", (f"the server ran {running} {ran.label()} instead of {algorithm} "
                                 f"{spec.label()}: "
                                 "SGLang rewrote the setting in a way tuner.sglang.rules does not know")
    return None


def _responses(result, spec: SpecConfig | None) -> Failure | None:
    ignore_eos = bool((result.suite or {}).get("ignore_eos", True))
    answered = [r for r in result.records if r.ok]
    problems: list[str] = []
    for r in answered:
        what = r.count_problem(ignore_eos) or speculation_problem(r, spec)
        if what:
            problems.append(f"{r.phase} {r.prompt} at {r.max_tokens} tokens: {what}")
    if not problems:
        return None
    cls = "args_mismatch" if spec is None and any("verify step" in p for p in problems) else "bad_response"
    return cls, f"{len(problems)} of {counted(len(answered), 'answer')} cannot be true (first: {problems[0]})"


def speculation_problem(r, spec: SpecConfig | None) -> str | None:
    """Why ``r``'s verify steps or accept length cannot come from ``spec`` (None: the baseline), or
    None. The bound is the module's: tight, on whole tokens, when ``spec_verify_ct`` is known;
    ``num_steps + 2`` for a reported accept length alone. The message names the bound it applied."""
    verify = r.spec_verify_ct
    if spec is None:
        if verify:
            return f"{counted(verify, 'verify step')} from an autoregressive server"
        # SGLang 0.5.23 sends spec_accept_length only with spec_verify_ct > 0 (tokenizer_manager.py
        # _calculate_spec_decoding_metrics; sglext's 0 is its "unknown", not kept): an accept length
        # alone is verify steps too (QA: 'accept length 2.50' beside a baseline's figures, exit 0)
        return (f"accept length {r.spec_accept_length:.2f} tokens per verify step from an autoregressive "
                "server" if r.spec_accept_length else None)
    n = r.completion_tokens
    if verify == 0 and n is not None and n > 1:
        # every token after the prefill's comes from a verify step, and SGLang 0.5.23 sends
        # spec_verify_ct only above 0 (tokenizer_manager.py _calculate_spec_decoding_metrics): a 0
        # beside more tokens is no count of this request's steps (QA: 256 tokens in 0 verify steps
        # passed, the trial's accept length silently missing)
        return (f"{counted(n, 'token')} in 0 verify steps: a speculative server commits every token "
                "after the prefill's in a verify step")
    per_step, rule = _per_step(spec)
    if verify:
        most = 1 + verify * per_step  # judged on whole tokens: exact, where n / verify would round
        if not verify <= n <= most:
            return (f"{counted(n, 'token')} in {counted(verify, 'verify step')}: "
                    f"accept length {n / verify:.2f}, outside 1 to "
                    f"{rule} + 1/spec_verify_ct = {most / verify:.4g} (at most {most} tokens: "
                    f"{rule} = {per_step} per verify step, plus the prefill's one)")
    elif r.spec_accept_length is not None and not 1 <= r.spec_accept_length <= per_step + 1:
        # spec_verify_ct >= 1 whenever an accept length exists, so the prefill's token adds at most 1
        loosest = "num_steps + 2" if rule == "num_steps + 1" else f"{rule} + 1"
        return (f"accept length {r.spec_accept_length:.2f}, outside 1 to {loosest} = {per_step + 1} "
                f"({rule} = {per_step} per verify step, plus the prefill's one token over at least "
                "one verify step: no spec_verify_ct was sent to bound it tighter)")
    return None


def _per_step(spec: SpecConfig) -> tuple[int, str]:
    """The most tokens one verify step of ``spec`` commits, and the name of the rule that bounds it:
    ``num_steps + 1`` (the drafted path is at most ``num_steps`` deep, plus the bonus token), or
    ``num_draft_tokens`` when that is fewer (a tree of ``topk`` > 1 verifies its root and the
    ``num_draft_tokens - 1`` best candidates alone: SGLang 0.5.23 ``speculative/eagle_utils.py``
    ``organize_draft_results``; :func:`tuner.config.landscape.most_accepted`, the simulator's tree).
    QA: 8 tokens in 2 verify steps passed from a server that said steps=5 topk=4 draft=3, whose step
    commits at most 3: accept length 4.00, where it was bounded by num_steps + 1 = 6. A server that
    does not say its draft tokens (``tuner bench``) is bounded by ``num_steps + 1``."""
    draft = spec.num_draft_tokens
    if isinstance(draft, int) and not isinstance(draft, bool) and draft < spec.num_steps + 1:
        return most_accepted(spec), "num_draft_tokens"
    return spec.num_steps + 1, "num_steps + 1"
