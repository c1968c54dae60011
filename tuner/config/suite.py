"""The benchmark suite as data: which prompts, lengths, repeats and concurrencies every run measures.

A suite is a YAML mapping (shipped: ``suites/seed.yaml``, the article's method, and
``suites/quick.yaml`` for demos and tests) or the same mapping inline in a study file. Its requests
are inline ``prompts`` or a ``dataset`` file (:mod:`tuner.config.dataset`: JSONL or ShareGPT).
:func:`load_suite` returns a frozen :class:`Suite` whose prompts all carry their text (prompt files
are read and the dataset drawn at load time, its SHA-256 recorded), so the suite stored with a
result is self-contained and loading it again reads no file. Any problem raises
:class:`tuner.config.yamlfile.ConfigError` naming the file and key.

Lengths: a request's output length is the phase's own (``single.lengths``, ``sweep.max_tokens``)
when the suite gives one, else the prompt's own ``max_tokens`` (every dataset request has one), else
the defaults (single: the prompt is skipped; sweep: 512). See :meth:`Suite.single_lengths` and
:meth:`Suite.sweep_tokens`.

Why one module of over 400 lines: it is the schema of one file, one pydantic model per section, and
the checks only a suite as written gets (prompt files, repeated lengths, blank turns, control
characters in names), which need the whole loaded suite; the dataset reader, which stands alone,
lives beside it (``dataset.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from .. import shipped
from .dataset import (ChatMessage, DatasetSpec, DrawCut, content_text, draw, instructions_only, not_text_kind,
                      url_problem)
from .durations import seconds_only
from .names import name_problem
from .paths import PathText
from .wording import counted
from .yamlfile import (MAX_DURATION_S, ConfigError, StrictModel, decode_utf8, did_you_mean, parse_model,
                       read_bytes_capped, read_yaml, text_mode)

#: Suites that ship with the package, by name.
SUITES_DIR = shipped(__package__, "suites")
SHIPPED_SUITES = ("seed", "quick", "mixed", "sharegpt-mini")


def shipped_suite_file(name: str) -> Path:
    """The package's file of the shipped suite ``name`` (one of :data:`SHIPPED_SUITES`)."""
    return SUITES_DIR / f"{name}.yaml"


#: A sweep request's output length when neither the suite nor the prompt gives one.
DEFAULT_SWEEP_TOKENS = 512
#: The most requests the tuner sends at once (a sweep's concurrency) and as warm-up: each batch is
#: built whole before it is sent (:meth:`Suite.cycled`), so a mistyped 10**23 ran `study create` out
#: of time and memory (QA: the fuzz of tests/cli/test_fuzz_inputs.py). Far above any concurrency a
#: speculative-decoding study measures; `tuner sim landscape --concurrency` takes the same cap.
MAX_CONCURRENCY = 16_384
#: The most repeats of a phase (``single.repeats``, ``sweep.repeats``, ``adaptive.max_repeats``): a
#: study's stage plan lists every repeat (tuner.bench.plan), so 10**9 had `study run --dry-run`
#: killed for memory (QA: the fuzz); a thousand passes of a phase are more than any night holds.
MAX_REPEATS = 1_000
#: The shortest ``timeout_s``: a request's timeout is a guard against a hung server, and the shortest
#: request of any model (one prefill and a decode step, plus loopback HTTP) takes tens of model
#: milliseconds; below a tenth of a second every request would time out (QA: 1e-7 was taken). At
#: most :data:`MAX_DURATION_S`, as every other duration of the tuner's files (QA: 1e300 was taken).
MIN_REQUEST_TIMEOUT_S = 0.1
#: The highest sampling ``temperature``. SGLang 0.5.23 checks only that it is finite and not negative
#: (``sampling/sampling_params.py`` line 255); OpenAI's API, which SGLang's /v1 routes serve, takes 0
#: to 2, and past 2 the logits are flattened to near-uniform noise over the vocabulary, which no
#: traffic samples (QA: 1e308 was taken).
MAX_TEMPERATURE = 2.0


class PromptSpec(StrictModel):
    """One prompt: its text inline, or a file (relative to the suite file) holding it. A loaded
    suite carries both (the file's text, and the file for provenance); then ``text`` is used. A
    suite as written gives one of them (:func:`refuse_text_and_file`)."""

    name: str = Field(min_length=1)
    text: str | None = None
    file: PathText | None = None
    #: OpenAI chat turns (``bench.api: chat`` sends them as they are; the raw-text APIs send ``text``,
    #: the turns' contents); None: one user turn holding ``text``
    messages: list[ChatMessage] | None = None
    max_tokens: int | None = Field(None, ge=1)  #: the request's own output length (datasets)
    category: str | None = None  #: a label counted in the workload statistics

    @model_validator(mode="after")
    def _text_or_file(self):
        if self.text is None and self.file is None:
            raise ValueError("give the prompt's text or a file holding it")
        if self.text is not None and not self.text.strip():
            raise ValueError("text must not be empty")
        return self

    def chat_messages(self) -> list[dict[str, Any]]:
        """The turns ``bench.api: chat`` sends (a content of text parts as the parts)."""
        if self.messages:
            return [m.model_dump() for m in self.messages]
        return [{"role": "user", "content": self.text or ""}]


class SingleSpec(StrictModel):
    """Single requests, one at a time: every prompt at every length, ``repeats`` times."""

    #: max_tokens of each row; omitted: each prompt's own max_tokens (a prompt without one is
    #: skipped); ``[]`` skips the phase
    lengths: list[int] | None = None
    repeats: int = Field(3, ge=1, le=MAX_REPEATS)  #: fixed repeats (the minimum in adaptive mode)
    prompts: int | None = Field(None, ge=1)  #: only the suite's first N prompts (default: all)

    @field_validator("lengths")
    @classmethod
    def _positive(cls, value: list[int] | None) -> list[int] | None:
        # the key and the value named, with the fix (QA: "single: lengths must be positive token counts")
        bad = next((n for n in value or [] if n < 1), None)
        if bad is not None:
            raise ValueError(f"{bad} is no output length; give each length as 1 or more tokens")
        return value


class SweepSpec(StrictModel):
    """Concurrency sweep: at concurrency C, C requests submitted at once; request i uses
    ``prompts[i % len(prompts)]``. Aggregate tok/s = total completion tokens / (last completion -
    first submission)."""

    concurrencies: list[int] = Field(default_factory=list)
    #: output length of every sweep request; omitted: each prompt's own max_tokens, else 512
    max_tokens: int | None = Field(None, ge=1)
    repeats: int = Field(1, ge=1, le=MAX_REPEATS)  #: batches per concurrency (the minimum in adaptive mode)

    @field_validator("concurrencies")
    @classmethod
    def _capped(cls, value: list[int]) -> list[int]:
        # each problem names the key, the value and the fix (QA: "sweep: concurrencies must be
        # positive", "sweep: concurrencies must not repeat", where a repeated length says which)
        if any(c > MAX_CONCURRENCY for c in value):
            raise ValueError(f"goes up to {max(value)}; the tuner's cap is {MAX_CONCURRENCY} requests at once")
        bad = next((c for c in value if c < 1), None)
        if bad is not None:
            raise ValueError(f"{bad} requests at once measure nothing; give each concurrency as 1 or more")
        repeated = next((c for i, c in enumerate(value) if c in value[:i]), None)
        if repeated is not None:
            raise ValueError(f"{repeated} is given twice; give each concurrency once (sweep.repeats says how "
                             "often each is measured)")
        return value


class WarmupSpec(StrictModel):
    """Requests sent first and not measured (JIT compilation, memory allocation)."""

    requests: int = Field(2, ge=0, le=MAX_CONCURRENCY)
    max_tokens: int = Field(16, ge=1)


class AdaptiveSpec(StrictModel):
    """Optional adaptive repeats: a row is repeated until the relative half-width of its 95%
    confidence interval (Student t) is at most ``rel_ci95``, or ``max_repeats`` is reached."""

    rel_ci95: float = Field(gt=0, lt=1)
    max_repeats: int = Field(10, ge=2, le=MAX_REPEATS)


class Suite(StrictModel):
    """A whole benchmark suite. Defaults: greedy decoding, ``ignore_eos`` (every request generates
    exactly ``max_tokens``), prefix cache flushed between phases."""

    name: str = Field(min_length=1)
    #: inline requests; with ``dataset`` they are the requests drawn from it (a loaded suite)
    prompts: list[PromptSpec] | None = Field(None, min_length=1)
    dataset: DatasetSpec | None = None  #: draw the requests from a JSONL or ShareGPT file
    single: SingleSpec = Field(default_factory=SingleSpec)
    sweep: SweepSpec = Field(default_factory=SweepSpec)
    warmup: WarmupSpec = Field(default_factory=WarmupSpec)
    #: per-request timeout in model seconds (wall seconds on SGLang; the client divides by the
    #: simulator's sim_speedup); a guard against a hung server, not a figure
    timeout_s: float = Field(300.0, gt=0)  #: MIN_REQUEST_TIMEOUT_S to MAX_DURATION_S (_a_guard)
    temperature: float = Field(0.0, ge=0, le=MAX_TEMPERATURE)
    ignore_eos: bool = True
    flush_cache: bool = True  #: POST /flush_cache between phases
    adaptive: AdaptiveSpec | None = None

    @field_validator("timeout_s", mode="before")
    @classmethod
    def _seconds_only(cls, v: Any) -> Any:
        # `timeout_s: 5m` said only "input should be a valid number, got '5m'" (QA, qa228): said as the
        # study's *_s keys say it, with the number of seconds to write
        return seconds_only(v)

    @field_validator("timeout_s")
    @classmethod
    def _a_guard(cls, v: float) -> float:
        if v < MIN_REQUEST_TIMEOUT_S:
            raise ValueError(f"{v:g} s would time out every request (the shortest takes tens of model "
                             f"milliseconds); give at least {MIN_REQUEST_TIMEOUT_S:g} s")
        if v > MAX_DURATION_S:
            raise ValueError(f"{v:g} s is longer than a year (the most a study may give: 366 days); check the unit")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.dataset is None and not self.prompts:
            raise ValueError("give the requests: prompts (inline) or dataset (a JSONL or ShareGPT file)")
        if self.dataset is not None and self.prompts and self.dataset.sha256 is None:
            raise ValueError("give prompts or dataset, not both")
        names = [p.name for p in self.prompts or []]
        if len(set(names)) != len(names):
            # the name is the prompt's key in the records, the tables and the lossless check (QA: the
            # line named neither the key nor the name)
            later = next(i for i, n in enumerate(names) if n in names[:i])
            first = names.index(names[later])
            raise ValueError(f"prompts[{later}].name {names[later]!r} is prompts[{first}]'s name too: prompt names "
                             "must be unique; rename one")
        if not self.sweep.concurrencies and (self.single.lengths == [] or (
                self.drawn and self.n_single_requests() == 0)):
            raise ValueError("nothing to measure: give single.lengths or sweep.concurrencies")
        return self

    @property
    def drawn(self) -> bool:
        """Whether every request is in ``prompts`` (inline, or a dataset drawn at load)."""
        return bool(self.prompts) and (self.dataset is None or self.dataset.sha256 is not None)

    def single_prompts(self) -> list[PromptSpec]:
        """The prompts the single-request phase uses (``single.prompts``: the first N)."""
        n = self.single.prompts
        prompts = self.prompts or []
        return list(prompts if n is None else prompts[:n])

    def single_lengths(self, prompt: PromptSpec) -> list[int]:
        """The lengths one prompt is measured at in the single-request phase."""
        if self.single.lengths is not None:
            return list(self.single.lengths)
        return [prompt.max_tokens] if prompt.max_tokens else []

    def sweep_tokens(self, prompt: PromptSpec) -> int:
        """A sweep request's output length for ``prompt``."""
        return self.sweep.max_tokens or prompt.max_tokens or DEFAULT_SWEEP_TOKENS

    def cycled(self, count: int) -> list[PromptSpec]:
        """The prompts of ``count`` requests that take the suite's prompts in turn (request i uses
        prompt ``i % n``): the warm-up calls, and each sweep batch of C requests."""
        prompts = self.prompts or []
        return [prompts[i % len(prompts)] for i in range(count)] if prompts else []

    def n_single_requests(self) -> int:
        """Single requests of one pass (times ``single.repeats`` for the whole phase)."""
        return sum(len(self.single_lengths(p)) for p in self.single_prompts())

    def prompt_text(self, name: str) -> str:
        for p in self.prompts:
            if p.name == name:
                return p.text or ""
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _with_dataset(suite: Suite, source: str | Path, base_dir: Path, as_written: bool = False) -> Suite:
    """Draw a dataset's requests into ``prompts`` and record the file's SHA-256 and the rows left out
    of the draw (a drawn suite is left as it is: loading a stored suite reads no file).

    ``as_written`` (a suite file, a study file's inline suite: :func:`check_as_written` follows): a draw
    :func:`refuse_large_draw_without_n` refuses is refused once its bound is passed, the rest of the
    file unread (QA qa207: 79 s and 867 MB to refuse a 100 MB log of 371,751 rows at its end)."""
    if suite.dataset is None or suite.drawn:
        return suite
    bound = large_draw_bound(suite) if as_written else None
    try:
        rows, digest, dropped = draw(suite.dataset, base_dir, str(source), at_most=bound)
    except DrawCut as cut:
        first = suite.model_copy(update={"prompts": _prompt_specs(cut.prompts, source)})
        refuse_large_draw_without_n(first, source, cut=True)
        rows, digest, dropped = draw(suite.dataset, base_dir, str(source))  # (not reached: the bound says so)
    prompts = _prompt_specs(rows, source)
    dataset = suite.dataset.model_copy(update={"sha256": digest, **dropped})
    update: dict[str, Any] = {"prompts": prompts, "dataset": dataset}
    return suite.model_copy(update=update)


def _prompt_specs(rows: list[dict], source: str | Path) -> list[PromptSpec]:
    """A draw's rows as the suite's prompts; a row the schema refuses is a :class:`ConfigError`."""
    try:
        return [PromptSpec.model_validate(row) for row in rows]
    except ValueError as exc:  # a row the schema refuses (it names the prompt)
        raise ConfigError(source, "dataset", str(exc).splitlines()[0]) from None


def _with_prompt_files(suite: Suite, source: str | Path, base_dir: Path) -> Suite:
    """Read every ``file`` prompt into ``text`` (keeping ``file`` for provenance), in Python's text
    mode (:func:`~tuner.config.yamlfile.text_mode`: no byte-order mark, LF line ends)."""
    prompts = []
    if suite.prompts is None:
        return suite
    for i, p in enumerate(suite.prompts):
        if p.file is not None and p.text is None:
            if (problem := url_problem(p.file)) is not None:
                raise ConfigError(source, f"prompts[{i}].file", problem)
            path = Path(p.file) if Path(p.file).is_absolute() else base_dir / p.file
            raw = b""
            try:
                raw = read_bytes_capped(path)
                text = text_mode(decode_utf8(raw, path))
            except ConfigError as exc:
                # a gzip'd or UTF-16 file (Notepad's "Unicode") is named as what it is, with the command
                # that makes it readable, as a dataset file is (QA qa207: "not UTF-8 text (byte 1); save
                # the file as UTF-8" for a prompt file gzip'd)
                kind = not_text_kind(path, raw[:16], "the prompt's file") if exc.message.startswith("not UTF-8") \
                    else None
                raise ConfigError(source, f"prompts[{i}].file",
                                  f"cannot read {path}: {kind or exc.message}") from None
            if not text.strip():
                raise ConfigError(source, f"prompts[{i}].file", f"{path} is empty")
            p = p.model_copy(update={"text": text})
        prompts.append(p)
    return suite.model_copy(update={"prompts": prompts})


#: The source an inline suite's errors name (the study file's loader puts its own name there).
INLINE_SUITE = "<inline suite>"


def refuse_text_and_file(data: Any, source: str | Path, key: str = "prompts") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key[i]`` for the first prompt of a suite
    as written (``data``: the raw mapping) that gives both ``text`` and ``file``.

    Only a suite as written is checked: a loaded (stored) suite carries both by design, the file's
    text and the file for provenance, and loading it again must not refuse it. Anything that is not
    a mapping of prompt mappings is left to the schema."""
    prompts = data.get("prompts") if isinstance(data, dict) else None
    for i, prompt in enumerate(prompts if isinstance(prompts, list) else []):
        if isinstance(prompt, dict) and prompt.get("text") is not None and prompt.get("file") is not None:
            name = f"prompt {prompt['name']!r}" if isinstance(prompt.get("name"), str) else "the prompt"
            raise ConfigError(source, f"{key}[{i}]", f"{name} gives both text and file; give one of "
                                                     f"text (inline) or file (a file holding the text)")


class TooManySinglePrompts(ConfigError):
    """``single.prompts`` over the suite's prompts (:func:`refuse_too_many_single_prompts`), or not given
    where the single phase would measure a large draw whole (:func:`refuse_every_drawn_request_alone`), or a
    large draw without ``dataset.n`` that is stored whole and sent in part (:func:`refuse_large_draw_without_n`). A study
    file's loader adds :data:`STUDY_HINT` to it; ``tuner bench`` and ``sim landscape`` say it bare,
    as no study is involved (QA: `tuner bench --suite FILE` told the user to `tuner study run`)."""


#: What a study whose suite asks too much can still do: it was stored before the check.
STUDY_HINT = ("; a study created with it before this check runs by name: tuner study run --study NAME "
              "--storage URL")


def refuse_too_many_single_prompts(suite: Suite, source: str | Path, key: str = "single.prompts") -> None:
    """Raise :class:`TooManySinglePrompts` naming ``source`` and ``key`` when ``single.prompts`` asks for more
    prompts than the loaded ``suite`` has (its inline prompts, or the requests drawn from its
    dataset), as ``dataset.n`` over the rows is refused: the phase would measure fewer single
    requests than asked, silently.

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    n, have = suite.single.prompts, len(suite.prompts or [])
    if n is None or n <= have:
        return
    what = (f"{counted(have, 'request')} drawn from {suite.dataset.path}" if suite.dataset is not None
            else counted(have, "prompt"))
    raise TooManySinglePrompts(source, key, f"{counted(n, 'prompt')} asked for, but the suite has "
                                            f"{what}; lower it to {have} or less, or remove it (default: "
                                            "every prompt)")


#: The most requests drawn from a dataset that the single-request phase measures one at a time when
#: ``single.prompts`` is not given (every prompt, by default). Inline prompts are written one by one;
#: a dataset of a real log holds tens of thousands of rows (ShareGPT_V3: 90k), each of which would
#: be measured alone, ``single.repeats`` times, by the baseline and by every trial.
MAX_IMPLICIT_SINGLE_PROMPTS = 100


def refuse_every_drawn_request_alone(suite: Suite, source: str | Path, key: str = "single.prompts") -> None:
    """Raise :class:`TooManySinglePrompts` naming ``source`` and ``key`` when ``single.prompts`` is not given and
    the suite's dataset draws more than :data:`MAX_IMPLICIT_SINGLE_PROMPTS` requests: the single phase
    would measure each of them alone, in every trial (QA: a ShareGPT file of 3,000 rows and no
    ``single.prompts`` planned 9,000 single requests a trial, and the study sat at "baseline:
    launching" with nothing said). Given explicitly, any number is taken.

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    have = len(suite.prompts or [])
    if suite.dataset is None or suite.single.prompts is not None or have <= MAX_IMPLICIT_SINGLE_PROMPTS:
        return
    if suite.n_single_requests() == 0:  # (single.lengths: [] measures no single request)
        return
    total = suite.n_single_requests() * suite.single.repeats
    # a smaller dataset.n is a fix only where n is not what drew them already (QA qa152: n: 101 of 101
    # rows was told "or dataset.n")
    n_fix = ", or dataset.n" if suite.dataset.n is None else f", or a dataset.n below {have}"
    raise TooManySinglePrompts(source, key, f"not given, so each of the {have:,} requests drawn from "
                                            f"{suite.dataset.path} is measured alone in every run of the suite "
                                            f"(each trial's, the baseline's: {total:,} single requests one at a "
                                            f"time, single.repeats {suite.single.repeats}): give single.prompts, "
                                            f"the first N drawn (e.g. 8){n_fix}; or single.prompts: "
                                            f"{have} to measure them all")


#: The most rows a dataset may give without ``dataset.n`` where a measurement sends fewer of them: every
#: row drawn is stored with the study and validated again by every command that loads the suite, so a
#: 100 MB log of 371,751 rows, of which a sweep up to C=32 sends the first 32, made `study create` take
#: 79 s and 867 MB, `study status` 57 s, and the study's storage 124 MB (QA qa207). A draw of this
#: many rows of a chat log (a kilobyte each) stores some 10 MB.
MAX_DRAWN_WITHOUT_N = 10_000


def large_draw_bound(suite: Suite) -> int | None:
    """The most requests a draw of ``suite``'s dataset may give before
    :func:`refuse_large_draw_without_n` refuses it whatever the rest of the file holds (more than
    :data:`MAX_DRAWN_WITHOUT_N`, and more than the single phase and the largest sweep batch send),
    or None when it may not refuse (``n`` given, no dataset): the draw stops reading there
    (:func:`tuner.config.dataset.draw`'s ``at_most``)."""
    d = suite.dataset
    if d is None or d.n is not None:
        return None
    return max(MAX_DRAWN_WITHOUT_N, suite.single.prompts or 0, max(suite.sweep.concurrencies, default=0))


def refuse_large_draw_without_n(suite: Suite, source: str | Path, key: str = "dataset.n", cut: bool = False) -> None:
    """Raise :class:`TooManySinglePrompts` naming ``source`` and ``key`` when a dataset without ``n`` gives more
    than :data:`MAX_DRAWN_WITHOUT_N` requests and a measurement does not send every one of them: each
    is drawn, stored with the study and read again by every command, while the single phase and each
    sweep batch take the file's first rows (a batch of C the first C). Runs before
    :func:`refuse_every_drawn_request_alone`, whose fix (``single.prompts``) would lead here: one
    refusal, with ``n``, which also draws across the file rather than from its start.

    ``cut``: ``suite`` holds the first requests of a draw cut past :func:`large_draw_bound` (the file
    holds more than it has, unread), said as "more than".

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    d, have = suite.dataset, len(suite.prompts or [])
    if d is None or d.n is not None or have <= MAX_DRAWN_WITHOUT_N:
        return
    swept = max(suite.sweep.concurrencies, default=0)
    singles = 0 if suite.n_single_requests() == 0 else suite.single.prompts
    if singles is None:  # (not given: the single phase measures each drawn request alone)
        sent = (f"each of them alone in the single phase (single.prompts not given), {suite.single.repeats} "
                "times, in every trial and the baseline")
        example = 64
    else:
        used = max(singles, swept)
        if used >= have:
            return  # every drawn request is sent, as asked
        sent = f"only the first {used:,} of them, the file's first rows"
        example = max(used, 1)
    count = f"more than {have - 1:,}" if cut else f"{have:,}"
    raise TooManySinglePrompts(source, key, f"not given, so every one of the {count} requests in {d.path} is drawn and "
                                            "stored with the study (each command that loads the suite reads them "
                                            f"all again), and a measurement sends {sent}: give n, the requests to "
                                            f"draw (e.g. n: {example}; dataset.seed chooses them across the whole "
                                            "file)")


def refuse_seed_without_n(suite: Suite, source: str | Path, key: str = "dataset.seed") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key`` when a dataset's ``seed`` is given (not
    0) without ``n``: every row is drawn then, in the file's order (:func:`tuner.config.dataset.draw`),
    so the seed chooses nothing, and the single phase and a sweep batch of C still take the file's
    first rows (QA: ``seed: 1``, ``2`` and ``0`` sent the same requests, silently).

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    d = suite.dataset
    if d is None or d.n is not None or d.seed == 0:
        return
    raise ConfigError(source, key, f"{d.seed} without dataset.n chooses nothing: every row is drawn, in the "
                                   "file's order, so the single phase and each sweep batch take the file's first "
                                   f"rows whatever the seed; give n (e.g. n: {len(suite.prompts or [])}, every row, "
                                   "in the seed's order) for the seed to choose, or drop seed")


def refuse_default_of_conversations(suite: Suite, source: str | Path,
                                    key: str = "dataset.default_max_tokens") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key`` when ``default_max_tokens`` is given for a
    ``sharegpt`` or ``custom`` dataset, whose every request takes its reply's length (SGLang 0.5.23
    ``benchmark/datasets/sharegpt.py``: ``output_len`` is the completion's token count), so the value is
    never read (QA qa207: ``default_max_tokens: 512`` on a ShareGPT file drew requests of 8 and 13 tokens,
    silently). Only a suite as written is checked; a stored suite loads as it was created."""
    d = suite.dataset
    if d is None or "default_max_tokens" not in d.model_fields_set or d.layout() == "jsonl":
        return
    raise ConfigError(source, key, f"{d.default_max_tokens} is never read: a {d.layout()} request's output length is "
                                   "its reply's, as SGLang's reader takes it (capped at max_output_tokens); drop it, "
                                   "or give every request one length as single.lengths and sweep.max_tokens")


def refuse_default_above_cap(suite: Suite, source: str | Path, key: str = "dataset.default_max_tokens") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key`` when a dataset's ``default_max_tokens`` is
    given above its ``max_output_tokens`` (1024 unless given), which caps every request's output length
    (:func:`tuner.config.dataset.draw`): the rows without their own ``max_tokens`` would be sent at the cap,
    not at the length written (QA qa207: ``default_max_tokens: 4096`` drew requests of 1024 tokens, silently).

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    d = suite.dataset
    if d is None or "default_max_tokens" not in d.model_fields_set or d.default_max_tokens <= d.max_output_tokens:
        return
    given = "" if "max_output_tokens" in d.model_fields_set else " (its default)"
    raise ConfigError(source, key, f"{d.default_max_tokens} is above max_output_tokens {d.max_output_tokens}{given}, "
                                   "which caps every request's output length, so the rows without max_tokens would "
                                   f"be sent at {d.max_output_tokens}; raise max_output_tokens to "
                                   f"{d.default_max_tokens} or more, or lower default_max_tokens")


def refuse_repeated_lengths(suite: Suite, source: str | Path, key: str = "single.lengths") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key`` when ``single.lengths`` gives a length
    twice, as a repeated concurrency is refused: the article's order (``tuner bench``) sends each
    prompt at it twice per repeat, while a study's stage plan (:func:`tuner.bench.plan.stage_plan`)
    sends the first repeat once, so the plan would change what is measured.

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    lengths = suite.single.lengths or []
    repeated = next((n for i, n in enumerate(lengths) if n in lengths[:i]), None)
    if repeated is not None:
        raise ConfigError(source, key, f"{repeated} is given twice; give each length once (single.repeats "
                                       "says how often each is measured)")


def refuse_blank_turns(suite: Suite, source: str | Path, key: str = "prompts") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``key[i].messages`` for the first prompt
    whose chat turns are all empty or whitespace: ``bench.api: chat`` would send an empty
    conversation (its ``text`` goes to the raw-text APIs only), as a blank prompt text is refused and
    a dataset row with empty turns is (:mod:`tuner.config.dataset`); or whose only text is its
    instructions (:func:`tuner.config.dataset.instructions_only`), as a dataset row's is refused.

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    for i, p in enumerate(suite.prompts or []):
        if p.messages and not any(content_text(m.content).strip() for m in p.messages):
            raise ConfigError(source, f"{key}[{i}].messages", f"prompt {p.name!r}: every message is empty; "
                                                              "give the turns' text, or leave messages out "
                                                              "(one user turn holding the prompt's text)")
        asked = p.messages and instructions_only([{"role": m.role, "content": m.content} for m in p.messages])
        if asked:
            raise ConfigError(source, f"{key}[{i}].messages", f"prompt {p.name!r}: {asked}; give the user "
                                                              "turn's text")


def refuse_control_in_names(suite: Suite, source: str | Path, prefix: str = "") -> None:
    """Raise :class:`ConfigError` naming ``source`` and the key for the suite's ``name``, or an inline
    prompt's ``name`` or ``category``, holding a control character (:func:`tuner.config.names.
    name_problem`): they are printed into status, report and progress lines, where a newline splits
    the line and an ESC drives the terminal (QA: both were taken). A dataset's labels are refused by
    the dataset's reader, naming its file and line.

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    # The suite's own name: C0 controls and DEL (a newline, ESC); a C1 control or U+2028 in it stays
    # allowed, as the export escapes them in its header comments (tests/results/test_export.py runs a
    # study with one to show that)
    bad = next((c for c in suite.name if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        raise ConfigError(source, f"{prefix}name", f"{suite.name!r} holds the control character {bad!r}; a name "
                                                   "is one line of printable text")
    if suite.dataset is not None:
        return
    for i, p in enumerate(suite.prompts or []):
        for key in ("name", "category"):
            value = getattr(p, key)
            problem = None if value is None else name_problem(value, whole=True)
            if problem:
                raise ConfigError(source, f"{prefix}prompts[{i}].{key}", f"{value!r} {problem}")


def refuse_adaptive_below_repeats(suite: Suite, source: str | Path, prefix: str = "") -> None:
    """Raise :class:`ConfigError` naming ``source`` and ``adaptive.max_repeats`` when it is below the
    fixed repeats of a phase the suite runs (``single.repeats``, ``sweep.repeats``): those are the
    minimum every row gets first (:mod:`tuner.bench.runner`), so the cap was silently passed (QA:
    ``max_repeats: 2`` with ``single.repeats: 5`` measured every row 5 times).

    Only a suite as written is checked (a suite file, a study file's inline suite): a stored suite
    is loaded again as it was created, so a study created before this check still opens."""
    if suite.adaptive is None:
        return
    cap = suite.adaptive.max_repeats
    phases = [("single.repeats", suite.single.repeats, suite.n_single_requests() > 0),
              ("sweep.repeats", suite.sweep.repeats, bool(suite.sweep.concurrencies))]
    for key, repeats, runs in phases:
        if runs and repeats > cap:
            raise ConfigError(source, f"{prefix}adaptive.max_repeats", f"{cap} is below {key} {repeats}, the "
                              f"repeats every row gets before the adaptive ones; raise it to {repeats} or more, "
                              f"or lower {key}")


def check_as_written(suite: Suite, source: str | Path, prefix: str = "") -> None:
    """The checks only a suite as written gets (a suite file, or a study file's inline suite, whose
    keys start with ``prefix``: ``bench.suite.``); a stored suite is loaded again as it was created,
    so a study created before one of them still opens. :class:`ConfigError` naming ``source``."""
    refuse_control_in_names(suite, source, prefix)
    refuse_too_many_single_prompts(suite, source, f"{prefix}single.prompts")
    refuse_large_draw_without_n(suite, source, f"{prefix}dataset.n")
    refuse_every_drawn_request_alone(suite, source, f"{prefix}single.prompts")
    refuse_seed_without_n(suite, source, f"{prefix}dataset.seed")
    refuse_default_of_conversations(suite, source, f"{prefix}dataset.default_max_tokens")
    refuse_default_above_cap(suite, source, f"{prefix}dataset.default_max_tokens")
    refuse_repeated_lengths(suite, source, f"{prefix}single.lengths")
    refuse_blank_turns(suite, source, f"{prefix}prompts")
    refuse_adaptive_below_repeats(suite, source, prefix)


def _dataset_not_suite(path: Path, layout: str) -> ConfigError:
    """A dataset given where a suite goes (``--suite data.jsonl``, as SGLang's ``bench_serving
    --dataset-path`` takes it): the fix, a suite that draws from it (QA: a JSONL file read as YAML was
    "name: required key is missing" or "line 4: not valid YAML", a ShareGPT list "expected a mapping
    at the top level, got list")."""
    return ConfigError(path, "", f"a {layout} dataset, not a suite file: give a suite YAML file that draws "
                                 f"its requests from it (name: my-traffic, dataset: {{path: {path.name}}}; "
                                 "see the README's \"Workloads from data\")")


def load_suite(spec: str | Path | dict | Suite, base_dir: Path | None = None,
               unquoted: dict[str, str] | None = None, as_written: bool = False) -> Suite:
    """A suite from a shipped name (``seed``, ``quick``), a YAML file path, or an inline mapping.

    ``base_dir`` resolves relative paths: the suite file path itself and, for an inline mapping,
    its prompt files (default: the current directory). Prompt files in a suite file are relative to
    that file. Raises :class:`ConfigError` ("FILE: KEY: message") on any problem. ``unquoted``: for
    an inline mapping, the unquoted numbers and booleans as its study file wrote them, keyed by their
    path under the suite (:func:`~tuner.config.yamlfile.written_numbers`); a suite file's are read
    with it. A number where text goes is then said as written (``1e3``, not ``1000.0``).
    ``as_written``: an inline mapping is a study file's suite as written (its loader calls
    :func:`check_as_written` next), so a draw that check refuses stops early (:func:`_with_dataset`);
    a suite file always is.
    """
    if isinstance(spec, Suite):
        return spec
    if isinstance(spec, dict):
        source = INLINE_SUITE
        suite = parse_model(Suite, spec, source, {"unquoted": unquoted or {}})
        base = Path(base_dir or Path.cwd())
        return _with_dataset(_with_prompt_files(suite, source, base), source, base, as_written)
    if not isinstance(spec, (str, Path)):
        raise ConfigError("<suite>", "", f"expected a suite name, file or mapping, got {type(spec).__name__}")
    text = str(spec)
    if not text.strip():  # Path("") is the current folder: "is a folder" would not say what was wrong
        raise ConfigError("<suite>", "", f"empty; give a shipped suite's name ({', '.join(SHIPPED_SUITES)}) or a "
                          "suite YAML file")
    if text in SHIPPED_SUITES:
        path = shipped_suite_file(text)
    else:
        path = Path(text)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        from .files import check_usable

        check_usable(path)
        if not path.exists() and path.suffix not in (".yaml", ".yml") and "/" not in text:
            raise ConfigError(text, "", f"unknown suite{did_you_mean(text, SHIPPED_SUITES)}; expected one "
                                        f"of {', '.join(SHIPPED_SUITES)} or a suite YAML file")
    if path.suffix.lower() == ".jsonl":
        raise _dataset_not_suite(path, "JSON-lines")
    # the texts as written: QA, `name: 1e3` said "quote it ('1000.0')", a name nobody wrote
    written: dict[str, str] = {}
    data = read_yaml(path, written)
    if isinstance(data, list) and path.suffix.lower() == ".json":
        raise _dataset_not_suite(path, "ShareGPT")
    refuse_text_and_file(data, path)
    suite = parse_model(Suite, data, path, {"unquoted": written})
    if suite.dataset is not None and suite.prompts:
        # (only a loaded suite holds both: its drawn requests and the file's pinned SHA-256)
        raise ConfigError(path, "prompts", "give prompts or dataset, not both")
    suite = _with_dataset(_with_prompt_files(suite, path, path.parent), path, path.parent, as_written=True)
    check_as_written(suite, path)
    return suite
