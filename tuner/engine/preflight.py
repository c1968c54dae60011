"""Before a study is written: what a run needs from this machine and from the study's other files.

:func:`tuner.config.study.load_study` checks the study file and the files it names (search space,
suite, datasets) as data. What it cannot check from the config layer is checked here, by the layers
that own it, before ``study create`` or ``run`` writes anything (the study, its storage, a log):

* ``server.python``: an executable file (a bare name is looked up on ``PATH``), a script's ``#!``
  interpreter too (:func:`tuner.server.interpreter.interpreter_problem`);
* ``workdir``: a folder, or nothing yet (never a file);
* ``server.sim.profile`` (``backend: sim``): a shipped profile or a valid profile file
  (:func:`tuner.sim.profile.load_profile`, the simulator's own loader);
* every request of the suite within the profile's context length (``backend: sim``, and ``model``
  with a profile): :func:`_check_context`, the simulated server's 400 found before the study is
  written (``backend: sglang`` leaves it to the real server; a landscape table has no context);
* ``backend: model`` with a profile: its baseline launches (fits the GPUs), the model's figures
  of it are a server's, and some setting of the space launches
  (:meth:`tuner.engine.model_backend.ModelBackend.baseline_problem`, ``none_launches``);
* ``backend: model`` with a landscape table: some row of it runs on the study's servers, in the space;
* the launch itself: the baseline's and a trial's command build (:func:`tuner.server.command.plan_launch`:
  conflicting ``fixed`` and ``server.args``, a trial without ``server.draft_model_path``);
* the space on the study's servers: at least one setting SGLang runs with the study's server
  arguments, attention backend and model facts (:func:`tuner.engine.facts.space_for`; e.g. an MHA
  EAGLE-3 head given the MLA-only ``trtllm_mla`` fails every launch);
* the sampler: built once with the study's options (:func:`tuner.engine.sampling.make_sampler`:
  e.g. ``gp`` without torch);
* a fixed ``server.port`` already taken (``run`` only): :class:`~tuner.server.ports.PortInUseError`.

Every problem raises :class:`~tuner.config.yamlfile.ConfigError` naming the study file and the key
(the port: ``PortInUseError``, whose message names ``server.port``). Nothing here writes anything.

Why one module of over 400 lines: it is one ordered pass, run the same way before ``study create``
and ``run``; each check is a few lines that ask the layer owning the answer (the launcher, the
simulator's profile loader, the rules), and they share the study's source and key naming and the
order (the settings that run on the study's servers, found once, are what the landscape, model-profile
and seed checks read), so a split would spread one sequence over modules that each hold a handful of calls.
"""

from __future__ import annotations

from pathlib import Path

from ..config.space import SearchSpace
from ..config.study import StudyConfig
from ..config.wording import counted
from ..config.yamlfile import ConfigError
from ..sglang.rules import AUTO_CHOICE, SpecConfig, resolved_attention_backend


def preflight(config: StudyConfig, space: SearchSpace | None, source: str | Path, *,
              launching: bool = False) -> None:
    """Check everything above for ``config`` and its search ``space`` (None: load the config's file;
    a study run from storage passes the stored one); ``source`` is the study file, or the study's
    name when it comes from storage; ``launching`` (`tuner study run`) also checks a fixed port, and
    first asks a database server once whether it answers (:func:`tuner.engine.silence.ask_storage`:
    the checks after it reuse the answer). Raises on the first problem."""
    if launching:
        _ask_storage(config)
    check_python(config, source)
    _check_workdir(config, source)
    if config.server.backend == "sim":
        _check_profile(config.server.sim.profile, "server.sim.profile", source)
    if config.server.backend == "model" and config.server.model is not None and config.server.model.profile is not None:
        _check_profile(config.server.model.profile, "server.model.profile", source)
    space = space or SearchSpace.load(config.search_space)
    _check_launch(config, space, source)
    _check_context(config, space, source)
    runs = _check_something_runs(config, space, source)
    _check_landscape_meets_space(config, space, runs, source)
    _check_model_profile(config, runs, source)
    _check_seeds(config, runs, source)
    _check_sampler(config, space, source)
    if launching and config.server.port:
        from ..server.ports import ensure_port_free

        ensure_port_free(config.server.host, config.server.port)


def _ask_storage(config: StudyConfig) -> None:
    """:func:`tuner.engine.silence.ask_storage` for the study's storage; a URL that does not resolve
    is said by the run itself, not here."""
    from .silence import ask_storage
    from .urls import resolve_url

    try:
        url = resolve_url(config.storage, "storage")
    except ConfigError:
        return
    ask_storage(url)


def named_for_file(exc: ConfigError, source: str | Path) -> ConfigError:
    """A lower layer's error (``study: server.args.x: ...``) as one naming the study file."""
    return ConfigError(source, exc.key, exc.message)


def check_python(config: StudyConfig, source) -> None:
    from ..server.interpreter import interpreter_problem

    python = config.server.python
    if python is None:
        return  # the interpreter running the tuner
    problem = interpreter_problem(python, config.server.env.get("PATH"))
    if problem is not None:
        raise ConfigError(source, "server.python", problem)


def _check_workdir(config: StudyConfig, source) -> None:
    workdir = Path(config.workdir) if config.workdir else None
    if workdir is not None and workdir.exists() and not workdir.is_dir():
        raise ConfigError(source, "workdir", f"{workdir} is a file, not a folder; give a folder for the "
                                             "trials' logs")


def _check_profile(profile: str, key: str, source) -> None:
    """``server.sim.profile`` or ``server.model.profile`` (``key``): a shipped name, or a path (a
    ``/`` or ``.yaml`` in it, made absolute against the study file when it loaded) to a profile that
    loads. A bare name that is not shipped
    is refused rather than looked up in the current folder (:func:`tuner.sim.profile.profile_path`
    would): the same study file must mean the same profile wherever it is run."""
    from ..config.paths import is_bare_name
    from ..config.yamlfile import did_you_mean
    from ..sim.profile import list_profiles, load_profile

    shipped = list_profiles()
    if is_bare_name(profile) and profile not in shipped:
        raise ConfigError(source, key, f"no such simulator profile {profile!r}"
                          f"{did_you_mean(profile, shipped)}; shipped: {', '.join(shipped)}, or give a profile "
                          f"file as a path relative to the study file (./{profile or 'PROFILE.yaml'})")
    try:
        load_profile(profile)
    except ConfigError as exc:
        raise ConfigError(source, key, str(exc)) from None


def _check_landscape_meets_space(config: StudyConfig, space: SearchSpace, runs: SearchSpace, source) -> None:
    """``server.model.landscape``: at least one of the table's settings lies in the search space and
    runs on the study's servers (``runs``: the space as :func:`_check_something_runs` returns it, with
    the study's server arguments; QA: a table of trees with rejection sampling, which allows topk 1 only,
    ran a study of nothing but failures, exit 0); else every launch would fail, a night of nothing.
    Rows outside the space are kept (a grid measured wider than the space) and never proposed."""
    model = config.server.model
    if config.server.backend != "model" or model is None or model.landscape is None:
        return
    from ..config.landscape import load_landscape

    try:
        table = load_landscape(model.landscape)
    except ConfigError:
        return  # said where the study file loaded, or by the backend with its file and key
    if set(table.configs) & set(runs.effective_configs()):
        return
    n = len(table.configs)
    listed = set(table.configs) & set(space.effective_configs())
    if listed:
        cfg, res = next((cfg, res) for cfg, res in space.proposals() if res.ok and res.effective in listed)
        why = runs.resolve(cfg).violation
        raise ConfigError(source, "server.model.landscape", f"{model.landscape}: "
                          f"{'its one setting does not run' if n == 1 else f'none of its {n} settings runs'} "
                          f"on this study's servers ({cfg.label()}: {why.message if why else 'refused'}); "
                          "change server.args or give a table of settings they run")
    failed_in = sorted(spec for spec in table.failures if spec in set(space.effective_configs()))
    if failed_in:  # QA (qa133): "its one setting lies outside", of a table whose rows in the space all failed
        measured = "its one measured setting lies outside" if n == 1 else f"none of its {n} measured settings lies in"
        raise ConfigError(source, "server.model.landscape", f"{model.landscape}: {measured} "
                          f"the search space {config.search_space}, and the {counted(len(failed_in), 'row')} in it "
                          f"failed at launch ({failed_in[0].label()}: {table.failures[failed_in[0]]}): every launch "
                          "would fail; give the space it was measured over, or a table with a measured setting in it")
    raise ConfigError(source, "server.model.landscape", f"{model.landscape}: "
                      f"{'its one setting lies outside' if n == 1 else f'none of its {n} settings lies in'} "
                      f"the search space {config.search_space} "
                      "(every launch would fail as not_in_landscape); give the space it was measured over")


def _check_model_profile(config: StudyConfig, space: SearchSpace, source) -> None:
    """``backend: model`` with a profile: its baseline launches and its figures are a server's
    (:meth:`tuner.engine.model_backend.ModelBackend.baseline_problem`), and some setting of the
    ``space`` (as the study's servers run it) launches (``ModelBackend.none_launches``); else the
    study would be written only to fail its baseline, to measure every trial over 0.0 tok/s, or to
    fail every launch."""
    model = config.server.model
    if config.server.backend != "model" or model is None or model.profile is None:
        return
    from ..config.suite import load_suite
    from .backends import make_backend

    try:
        backend = make_backend(config, space, load_suite(config.bench.suite, base_dir=Path(source).parent))
    except ConfigError:
        return  # said by _check_profile / the suite's check
    problem = backend.baseline_problem() or backend.none_launches(space.effective_configs())
    if problem is not None:
        raise ConfigError(source, "server.model.profile", f"{model.profile}: {problem}")


def _plan(config: StudyConfig, space: SearchSpace, spec: SpecConfig | None):
    """The launch plan of ``spec`` (None: the baseline) with the study's pins; raises the
    command layer's :class:`ConfigError`."""
    from ..server.command import plan_launch, study_max_concurrency

    return plan_launch(config.server, spec, algorithm=space.config.algorithm, fixed_args=space.config.fixed,
                       port=config.server.port, max_concurrency=study_max_concurrency(config),
                       attention=space.attention, log_warnings=False)


def _check_launch(config: StudyConfig, space: SearchSpace, source) -> None:
    try:
        for s in (None, SpecConfig(*AUTO_CHOICE)):
            _plan(config, space, s)
    except ConfigError as exc:
        raise named_for_file(exc, source) from None


def _check_context(config: StudyConfig, space: SearchSpace, source) -> None:
    """Every request the suite sends fits the simulated model's context, as the simulator
    (following SGLang 0.5.23's ``tokenizer_manager.py`` ``_validate_one_request``: the input alone
    ``>=`` the context, or input plus ``max_tokens`` ``>`` it, is HTTP 400; and its scheduler's rules,
    :mod:`tuner.sim.context`: an input of the context - 6 tokens or more is HTTP 400, input plus
    ``max_tokens`` over the context - 2 comes back short) would judge it at the baseline: the
    profile's ``context_length_tokens`` (``--context-length`` when the study pins it), prompt tokens
    by the simulator's own count (:meth:`tuner.sim.model.PerfModel.prompt_tokens`; a chat request by
    its template stand-in, :func:`tuner.sim.requests.chat_prompt`), each request
    at the largest ``max_tokens`` a phase sends it with. Checked for ``backend: sim`` and for
    ``backend: model`` with a profile (which has no server to refuse it: its figures would be of
    requests SGLang never serves); not for ``backend: sglang`` (the real server's limit is unknown
    here: its 400 fails the baseline) nor a landscape table (no context length in it). A trial's
    EAGLE reserved draft slots are not counted: they vary by setting, and such a near-limit
    request fails those trials as on SGLang (on ``backend: model`` too, as ``request_errors``:
    :class:`tuner.engine.model_backend.ModelBackend`). Raises :class:`ConfigError` naming the suite (or
    dataset) file and the request."""
    if config.server.backend == "sim":
        profile_name = config.server.sim.profile
    elif config.server.backend == "model" and config.server.model is not None and config.server.model.profile:
        profile_name = config.server.model.profile
    else:
        return
    from ..config.suite import SHIPPED_SUITES, load_suite, shipped_suite_file
    from ..sim.context import ContextCheck
    from ..sim.model import PerfModel, load_profile
    from .model_suite import request_token_needs

    try:
        model = PerfModel(load_profile(profile_name))
        pinned = _context_length_given(_plan(config, space, None))
    except ConfigError:
        return  # said by _check_profile / _check_launch
    # As the simulated server resolves it (tuner.sim.server_info.resolved_server_args).
    limit = int(pinned or model.profile.runtime.context_length_tokens)
    where = (f"the context length {limit} (--context-length of the server's command)" if pinned
             else f"the context length {limit} of profile {model.profile.name}")
    spec = config.bench.suite
    suite = load_suite(spec, base_dir=Path(source).parent)
    if isinstance(spec, str):
        suite_file, key = (shipped_suite_file(spec) if spec in SHIPPED_SUITES else Path(spec)), "prompts"
    else:
        suite_file, key = Path(source), "bench.suite.prompts"
    dataset_key = key.replace("prompts", "dataset")
    # SGLang's scheduler serves less than its tokenizer manager lets in (tuner.sim.context): a request
    # within 2 tokens of the context comes back short, an input within 6 is refused
    scheduler = ContextCheck(limit, 0, None)
    for i, p, n_in, out in request_token_needs(suite, model.prompt_tokens, config.bench.api == "chat"):
        over = not (n_in < limit and n_in + out <= limit)
        refused = n_in >= scheduler.max_req_input_len
        if not over and not refused and scheduler.served_max(n_in, out) == out:
            continue
        total = f"{n_in} prompt tokens" + (f" + max_tokens {out}" if out else "")
        counts = (f"tokens by the simulator's count, characters / {model.profile.runtime.chars_per_token:g}, "
                  "a CJK character or an emoji one token")
        if over:
            said = f"{total} is over {where} ({counts}); SGLang refuses it with HTTP 400"
        elif refused:
            said = (f"{total} is within {limit - scheduler.max_req_input_len} tokens of {where} ({counts}); "
                    f"SGLang's scheduler refuses an input of {scheduler.max_req_input_len} tokens or more "
                    "with HTTP 400")
        else:
            said = (f"{total} is within {limit - scheduler.max_req_len + 1} tokens of {where} ({counts}); "
                    f"SGLang's scheduler lowers its max_tokens to {scheduler.served_max(n_in, out)} (the "
                    "context - 2 - the input), so its answer comes back short")
        if suite.dataset is not None:
            data = Path(suite.dataset.path)
            file, at = (data if data.is_absolute() else suite_file.parent / data), f"request {p.name}"
            if n_in < scheduler.max_req_input_len and out:
                # the prompt alone fits: its output length does not (QA, qa188: a 9-token prompt with
                # max_tokens 9000 was told to drop it by max_prompt_chars, which cannot drop a short prompt)
                fix = (f"lower its max_tokens ({dataset_key}.max_output_tokens caps every request's) or shorten "
                       "it; or, if the model takes longer inputs, raise server.args.context_length")
            else:
                fix = (f"shorten it, lower its max_tokens, or drop it ({dataset_key}.max_prompt_chars); or, if "
                       "the model takes longer inputs, raise server.args.context_length")
        else:
            file, at = suite_file, f"{key}[{i}]" + (f" (file {p.file})" if p.file else "")
            fix = ("shorten it or lower its max_tokens (single.lengths, sweep.max_tokens, warmup.max_tokens); or, "
                   "if the model takes longer inputs, raise server.args.context_length")
        raise ConfigError(file, at, f"{said}: {fix}")


def _context_length_given(plan) -> int | None:
    """``--context-length`` as the simulated server reads its command (:func:`tuner.sim.args.parse_to_check`,
    SGLang's parser: ``server.args``, a space's ``fixed`` and ``server.extra_args`` alike, abbreviations
    too, the last one given wins), or None. A command that does not parse is not this check's to say
    (:func:`_check_launch`, `tuner doctor`): the pinned ``server.args`` value stands then, read as
    SGLang reads it (:func:`tuner.sglang.arg_types.token_count`: ``128k`` is 128000)."""
    import argparse

    from ..sglang.arg_types import token_count
    from ..sim.args import parse_to_check

    try:
        given = parse_to_check(plan.argv[3:], known_only=True)  # after `python -m MODULE`
    except ValueError:
        pinned = plan.server_args.get("context_length")
        try:
            return None if pinned is None else token_count(pinned)
        except argparse.ArgumentTypeError:
            return None  # refused when the study file loads (tuner.config.server_arg_checks)
    return getattr(given, "context_length", None)


#: Rules a study's server arguments break for every setting (tuner.sglang.rules): the fix is there.
WHOLE_STUDY_RULES = ("backend-no-spec", "draft-backend-kind", "rejection-sampling-thresholds", "model-backend",
                     "mamba-cache")


def _check_something_runs(config: StudyConfig, space: SearchSpace, source) -> SearchSpace:
    """The ranges run something on their own (checked as the space loads); here, with everything
    a launch adds (a stored study's space has it already): the backends start on this study's
    GPUs (:func:`tuner.sglang.attention.gpu_refusal`; the baseline too) and some setting runs.
    Returns the space with what a launch adds, as :func:`tuner.engine.study.create_study` sees it."""
    from collections import Counter

    from .facts import prepare, space_for

    if space.rules_context is None:
        from .study import made_without_decision

        try:
            facts, _, record = prepare(config, space)
            # a study an older tuner made (read only): the backend its launches run, as create_study judges it
            space, _ = space_for(space, config, None if made_without_decision(config, source) else record)
        except ConfigError as exc:
            raise named_for_file(exc, source) if exc.source == "study" else exc from None
        check_backends_start(facts, space.rules_context, source)
    counts: Counter = Counter()
    first: dict = {}
    for _, res in space.proposals():
        if res.ok:
            return space
        counts[res.violation.rule] += 1
        first.setdefault(res.violation.rule, res.violation)
    # The causes that fail every setting whatever its flags come first: they are the fix.
    ranked = sorted(counts, key=lambda r: (r not in WHOLE_STUDY_RULES, -counts[r]))[:2]
    key = "server.args" if ranked[0] in WHOLE_STUDY_RULES else "search_space"
    if key == "server.args" and space.config.fixed and not (config.server.args or config.server.extra_args):
        # the arguments are the space's fixed ones (QA: rejection sampling there was named server.args)
        key = "search_space's fixed"
    causes = "; ".join(f"{counts[r]} break {r} ({first[r].when()}): {first[r].message}" for r in ranked)
    raise ConfigError(source, key, f"no setting of the search space runs on this study's servers "
                                   f"({sum(counts.values())} tried): {causes}")


def check_backends_start(facts, ctx, source) -> None:
    """Every attention backend the server would run (the target's, the draft runner's, prefill and
    decode) starts on these GPUs for its model; raises :class:`ConfigError` naming ``source``'s
    ``server.args`` otherwise. ``facts``: the study's :class:`StudyFacts`; ``ctx``: its space's rules
    context. `tuner doctor` runs it too.

    SGLang's order: first its argument-handling checks of the target's backends
    (:func:`tuner.sglang.attention.launch_refusal`: the attention backend SGLang resolves, which it
    checks even when prefill and decode backends are both given, then prefill and decode), then the
    fa3 fallback (fp8_e5m2 turns fa3 into triton, so fa3 does not run), then each runner as it starts
    (:func:`tuner.sglang.attention.runner_backends`, the list the simulator checks too;
    :func:`tuner.sglang.attention.gpu_refusal`: fa3's GPU assert in attention_registry.py). QA
    (qa150): Kimi K2.6 on sm90 with attention_backend trtllm_mla and prefill/decode backends
    triton/flashinfer passed create, and SGLang refused every launch (overrides.py,
    _mla_kv_cache_dtype_checks); fa3 with kv_cache_dtype fp8_e5m2 on SM100 was refused, and SGLang
    runs it on triton."""
    from ..sglang.attention import LaunchRefusal, gpu_refusal, kv_dtype_refusal, launch_refusal, runner_backends

    kind = facts.target.attention if facts.target else None
    attention = resolved_attention_backend(ctx)
    prefill, decode = ctx.prefill_attention_backend, ctx.decode_attention_backend
    found = launch_refusal(attention, prefill, decode, facts.gpu, kind, prefill_given=prefill,
                           kv_cache_dtype=ctx.kv_cache_dtype)
    if found is None and facts.gpu is None:
        # GPU not known: the KV-cache dtype checks refuse these backends on every GPU that takes them
        found = next((LaunchRefusal(refusal, b, "kv_dtype") for b in dict.fromkeys((attention, decode)) if b
                      for refusal in [kv_dtype_refusal(b, ctx.kv_cache_dtype)] if refusal is not None), None)
    if found is not None:
        raise ConfigError(source, "server.args", _launch_refusal_line(found, facts, ctx))
    models = {"target": (facts.target, "the model"), "draft": (facts.draft, "the draft model")}
    for backend, runner in runner_backends(attention, prefill, decode, ctx.draft_attention_backend,
                                           ctx.kv_cache_dtype):
        model, who = models[runner]
        refusal = gpu_refusal(backend, facts.gpu, model.attention if model else None)
        if refusal is not None:
            raise ConfigError(source, "server.args", f"attention backend {backend} does not start for {who} "
                                                     f"on {facts.gpu.name} (SGLang: {refusal}); set another "
                                                     "attention backend")


def _launch_refusal_line(found, facts, ctx) -> str:
    """One line for what :func:`tuner.sglang.attention.launch_refusal` found: what, SGLang's words, the fix."""
    if found.what == "prefill_role":
        return ("prefill_attention_backend cutedsl_mla: SGLang 0.5.23 refuses it (CuteDSL MLA only supports "
                "decoding for now); give it as decode_attention_backend")
    if found.what == "sm120_prefill":
        return (f"kv_cache_dtype {ctx.kv_cache_dtype}: the prefill backend trtllm_mha does not take it on "
                f"{facts.gpu.name} (SGLang: {found.error}); set kv_cache_dtype auto or bf16, or another "
                "attention backend")
    if found.what == "kv_dtype":
        return (f"kv_cache_dtype {ctx.kv_cache_dtype}: attention backend {found.backend} does not take it "
                f"(SGLang: {found.error}); set kv_cache_dtype to one it takes, or another attention backend")
    roles = [name for name, value in (("attention_backend", ctx.attention_backend),
                                      ("prefill_attention_backend", ctx.prefill_attention_backend),
                                      ("decode_attention_backend", ctx.decode_attention_backend))
             if value == found.backend]
    given = " and ".join(roles) or "attention_backend"
    return (f"attention backend {found.backend} does not start for the model on {facts.gpu.name} "
            f"(SGLang: {found.error}); set another {given}")


def _check_seeds(config: StudyConfig, space: SearchSpace, source) -> None:
    """Every ``seed_trials`` entry lies in ``space``; the error names the study file, not the
    placeholder ``study file`` :func:`tuner.engine.study.seed_trials` raises with."""
    from .study import seed_trials

    try:
        seed_trials(config, space)
    except ConfigError as exc:
        raise named_for_file(exc, source) from None


def _check_sampler(config: StudyConfig, space: SearchSpace, source) -> None:
    from .sampling import make_sampler

    try:
        make_sampler(config.sampler, 0, space)
    except ConfigError as exc:
        raise named_for_file(exc, source) from None
