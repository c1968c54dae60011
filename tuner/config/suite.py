"""The benchmark suite as data: which prompts, lengths, repeats and concurrencies every run measures.

A suite is a YAML mapping (shipped: ``suites/seed.yaml``, the article's method, and
``suites/quick.yaml`` for demos and tests) or the same mapping inline in a study file.
:func:`load_suite` returns a frozen :class:`Suite` whose prompts all carry their text (prompt files
are read at load time), so the suite stored with a result is self-contained. Any problem raises
:class:`tuner.config.yamlfile.ConfigError` naming the file and key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from .yamlfile import ConfigError, StrictModel, did_you_mean, parse_model, read_yaml

#: Suites that ship with the package, by name.
SUITES_DIR = Path(__file__).parent / "suites"
SHIPPED_SUITES = ("seed", "quick")


class PromptSpec(StrictModel):
    """One prompt: its text inline, or a file (relative to the suite file) holding it. A loaded
    suite carries both (the file's text, and the file for provenance); then ``text`` is used."""

    name: str = Field(min_length=1)
    text: str | None = None
    file: str | None = None

    @model_validator(mode="after")
    def _text_or_file(self):
        if self.text is None and self.file is None:
            raise ValueError("give the prompt's text or a file holding it")
        if self.text is not None and not self.text.strip():
            raise ValueError("text must not be empty")
        return self


class SingleSpec(StrictModel):
    """Single requests, one at a time: every prompt at every length, ``repeats`` times."""

    lengths: list[int] = Field(default_factory=list)  #: max_tokens of each row
    repeats: int = Field(3, ge=1)  #: fixed repeats (the minimum in adaptive mode)

    @model_validator(mode="after")
    def _positive(self):
        if any(n < 1 for n in self.lengths):
            raise ValueError("lengths must be positive token counts")
        return self


class SweepSpec(StrictModel):
    """Concurrency sweep: at concurrency C, C requests submitted at once; request i uses
    ``prompts[i % len(prompts)]``. Aggregate tok/s = total completion tokens / (last completion -
    first submission)."""

    concurrencies: list[int] = Field(default_factory=list)
    max_tokens: int = Field(512, ge=1)
    repeats: int = Field(1, ge=1)  #: batches per concurrency (the minimum in adaptive mode)

    @model_validator(mode="after")
    def _positive(self):
        if any(c < 1 for c in self.concurrencies):
            raise ValueError("concurrencies must be positive")
        if len(set(self.concurrencies)) != len(self.concurrencies):
            raise ValueError("concurrencies must not repeat")
        return self


class WarmupSpec(StrictModel):
    """Requests sent first and not measured (JIT compilation, memory allocation)."""

    requests: int = Field(2, ge=0)
    max_tokens: int = Field(16, ge=1)


class AdaptiveSpec(StrictModel):
    """Optional adaptive repeats: a row is repeated until the relative half-width of its 95%
    confidence interval (Student t) is at most ``rel_ci95``, or ``max_repeats`` is reached."""

    rel_ci95: float = Field(gt=0, lt=1)
    max_repeats: int = Field(10, ge=2)


class Suite(StrictModel):
    """A whole benchmark suite. Defaults: greedy decoding, ``ignore_eos`` (every request generates
    exactly ``max_tokens``), prefix cache flushed between phases."""

    name: str = Field(min_length=1)
    prompts: list[PromptSpec] = Field(min_length=1)
    single: SingleSpec = Field(default_factory=SingleSpec)
    sweep: SweepSpec = Field(default_factory=SweepSpec)
    warmup: WarmupSpec = Field(default_factory=WarmupSpec)
    #: per-request timeout in model seconds (wall seconds on SGLang; the client divides by the
    #: simulator's sim_speedup); a guard against a hung server, not a figure
    timeout_s: float = Field(300.0, gt=0)
    temperature: float = Field(0.0, ge=0)
    ignore_eos: bool = True
    flush_cache: bool = True  #: POST /flush_cache between phases
    adaptive: AdaptiveSpec | None = None

    @model_validator(mode="after")
    def _consistent(self):
        names = [p.name for p in self.prompts]
        if len(set(names)) != len(names):
            raise ValueError("prompt names must be unique")
        if not self.single.lengths and not self.sweep.concurrencies:
            raise ValueError("nothing to measure: give single.lengths or sweep.concurrencies")
        return self

    def prompt_text(self, name: str) -> str:
        for p in self.prompts:
            if p.name == name:
                return p.text or ""
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _with_prompt_files(suite: Suite, source: str | Path, base_dir: Path) -> Suite:
    """Read every ``file`` prompt into ``text`` (keeping ``file`` for provenance)."""
    prompts = []
    for i, p in enumerate(suite.prompts):
        if p.file is not None and p.text is None:
            path = Path(p.file) if Path(p.file).is_absolute() else base_dir / p.file
            try:
                text = path.read_text()
            except OSError as exc:
                raise ConfigError(source, f"prompts[{i}].file",
                                  f"cannot read {path}: {exc.strerror or exc}") from None
            if not text.strip():
                raise ConfigError(source, f"prompts[{i}].file", f"{path} is empty")
            p = p.model_copy(update={"text": text})
        prompts.append(p)
    return suite.model_copy(update={"prompts": prompts})


def load_suite(spec: str | Path | dict | Suite, base_dir: Path | None = None) -> Suite:
    """A suite from a shipped name (``seed``, ``quick``), a YAML file path, or an inline mapping.

    ``base_dir`` resolves relative paths: the suite file path itself and, for an inline mapping,
    its prompt files (default: the current directory). Prompt files in a suite file are relative to
    that file. Raises :class:`ConfigError` ("FILE: KEY: message") on any problem.
    """
    if isinstance(spec, Suite):
        return spec
    if isinstance(spec, dict):
        source = "<inline suite>"
        suite = parse_model(Suite, spec, source)
        return _with_prompt_files(suite, source, Path(base_dir or Path.cwd()))
    if not isinstance(spec, (str, Path)):
        raise ConfigError("<suite>", "", f"expected a suite name, file or mapping, got {type(spec).__name__}")
    text = str(spec)
    if text in SHIPPED_SUITES:
        path = SUITES_DIR / f"{text}.yaml"
    else:
        path = Path(text)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        if not path.exists() and path.suffix not in (".yaml", ".yml") and "/" not in text:
            raise ConfigError(text, "", f"unknown suite{did_you_mean(text, SHIPPED_SUITES)}; expected one "
                                        f"of {', '.join(SHIPPED_SUITES)} or a suite YAML file")
    suite = parse_model(Suite, read_yaml(path), path)
    return _with_prompt_files(suite, path, path.parent)
