"""``tuner bench``: run the fixed benchmark suite against any SGLang-compatible server.

Collect options, load the suite (and the baseline for ``--compare``), call
:func:`tuner.bench.run_suite`, print the article's tables. Exit codes: 0 done, every request
answered; 1 the server was unreachable or died mid-suite (the partial result is saved with
``--json``), a request failed or timed out (the tables and ``--json`` are still written; one line
counts them and quotes the first server message), every request failed (or every measured one, the warm-up aside), or an answer's
token count cannot be true (more than asked, none, or not what ``ignore_eos`` asks) or its verify
steps cannot come from the speculative setting the server says it runs, or the server's
clock cannot be (frozen or starved mid-suite: :func:`tuner.engine.verify.clock_problem`), 2 bad input
(suite file, baseline file or one measured with another suite or API, output path; a suite asking a
request more tokens than the server's context length, said before the first request is sent).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..config.names import shown as escaped
from ..config.wording import counted
from ..config.yamlfile import ConfigError
from .output import console, not_empty
from .sglang_bench_flags import sglang_dataset_flag

if TYPE_CHECKING:
    from ..bench import SuiteResult

# The suite's client (aiohttp, asyncio), its results and rich's progress bar are imported by the
# functions that use them: `tuner --help` imports this module for its one-line help (click asks every
# command of a group), and loaded aiohttp for it.


class _ProgressBar:
    """A rich progress bar fed by ``run_suite``'s events (only drawn on a terminal; a failed write
    stops it drawing, not the suite: :class:`tuner.cli.bench_bar.GuardedProgress`)."""

    def __init__(self):
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

        from .bench_bar import GuardedProgress

        # the description holds a prompt's name (a dataset row's id): text, not rich markup (QA: a name
        # holding "[/]", or an id like "[/r/AskReddit]", ended the run in a MarkupError traceback on
        # a terminal, nothing saved; "[red]" coloured the line)
        self.progress = GuardedProgress(TextColumn("{task.description}", markup=False), BarColumn(),
                                        MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
        self.task = self.progress.add_task("connecting", total=None)

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "warmup":
            desc = "warm-up"
        elif phase == "single":
            desc = escaped(f"single {info['prompt']} {info['max_tokens']} tok #{info['repeat'] + 1}")
        elif phase == "sweep":
            desc = f"sweep C={info['concurrency']}"
        else:
            return
        self.progress.update(self.task, description=desc, completed=info["step"] - 1,
                             total=info["total_steps"])


def _draws_a_bar() -> bool:
    """Whether the progress bar is drawn: only when stdout is a terminal, as `tuner study run`'s live
    panel (tuner/cli/progress.py). Why: rich takes ``FORCE_COLOR`` (set in many CI setups for
    coloured logs; ``TTY_COMPATIBLE=1`` too) as a terminal, so `FORCE_COLOR=1 tuner bench ... >
    bench.log` wrote the bar's redraws into the log, the cursor hidden and a carriage return per
    refresh (QA, qa172); the colours it asks for stay in the tables. A console a program made a
    terminal itself (``force_terminal``) is taken at its word."""
    import os

    if not console.is_terminal:
        return False
    isatty = getattr(console.file, "isatty", None)
    if isatty is not None and isatty():
        return True
    return not (os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1")


def _path_flag(instead: str):
    """A file flag's callback: an empty value (a script's unset ``"$OUT"``) is refused naming the flag
    (:func:`tuner.cli.output.not_empty`), not read as ``Path("")``, the working folder (QA fuzz:
    ``--json ''`` said ``error: --json: .: is a folder``); else the value as a :class:`Path`."""
    check = not_empty(instead)

    def callback(ctx, param, value):
        value = check(ctx, param, value)
        return None if value is None else Path(value)

    return callback


@click.command()
@click.option("--dataset-name", hidden=True, expose_value=False, callback=sglang_dataset_flag)
@click.option("--dataset-path", hidden=True, expose_value=False, callback=sglang_dataset_flag)
@click.option("--url", required=True,
              callback=not_empty("give the running server's base URL, e.g. http://127.0.0.1:30000"),
              help="Base URL of the running server, e.g. http://127.0.0.1:30000")
@click.option("--suite", "suite_spec", default="seed", show_default=True,
              callback=not_empty("give a shipped suite's name or a suite YAML file, or leave --suite out"),
              help="seed (the article's), quick, mixed or sharegpt-mini (datasets), or a suite YAML file.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None,
              callback=_path_flag("give a file name, or leave --json out"),
              help="Save the full result (every request record) as JSON; saved even if the server dies.")
@click.option("--compare", "baseline_path", type=click.Path(dir_okay=False), default=None,
              callback=_path_flag("give a result saved with --json, or leave --compare out"),
              help="A result saved with --json (e.g. the autoregressive baseline): print the speedup of every row.")
@click.option("--api", type=click.Choice(["generate", "openai", "chat"]), default="generate", show_default=True,
              help="SGLang's native /generate, OpenAI /v1/completions, or OpenAI /v1/chat/completions "
                   "(the server applies the model's chat template).")
@click.option("--stream", is_flag=True, help="Stream responses: adds time to first token and inter-token latency.")
def bench(url, suite_spec, json_out, baseline_path, api, stream) -> None:
    """Benchmark a running server with a fixed suite (the article's method by default).

    Figures from the simulated server are in model time (its wall clock runs --sim-speedup
    times faster), labelled so; raw wall times stay in the --json records.
    """
    from ..bench import (BenchError, ServerDiedError, ServerLostError, SuiteOverContext, TunerOutOfFiles,
                         run_suite)
    from ..config.suite import load_suite
    from ..engine.urls import redact, scrub
    from .bench_baseline import load_baseline, other_prompt_tokens, refuse_untrue_baseline, untrue_answers
    from .bench_tables import print_result

    # A password in --url (user:PASSWORD@host) is shown, logged and saved as *** only.
    shown = redact(url) or url

    def clean(text: str) -> str:
        # a server's message, a suite's prompt name: printed escaped (tuner.config.names.shown)
        text = escaped(text)
        return scrub(text, url) if shown != url else text

    suite = load_suite(suite_spec)
    base = None if baseline_path is None else load_baseline(baseline_path)
    if json_out is not None:
        from ..config.files import check_output
        from ..config.suite import SHIPPED_SUITES, shipped_suite_file
        from .own_files import check_not_among, suite_file_inputs

        # never over this command's own inputs: the suite (and its files) or the --compare result,
        # a measurement the new one would replace (QA: both were written over, exit 0); a shipped
        # suite's file and dataset too, in the package (QA: --suite quick --json .../quick.yaml
        # wrote the result there, and `quick` no longer loaded)
        inputs = [("the --compare result", baseline_path)]
        shipped = suite_spec in SHIPPED_SUITES
        inputs += suite_file_inputs(shipped_suite_file(suite_spec) if shipped else suite_spec,
                                    "the --suite file", owner="the --suite file")
        check_not_among(json_out, "--json", inputs)
        check_output(json_out, "--json")  # no missing folder is made, as for every output
    def out_of_files(exc: TunerOutOfFiles) -> None:  # this process's own ulimit -n: no server's figure after it
        where = ""
        if json_out is not None and exc.partial is not None:
            exc.partial.base_url = shown
            exc.partial.save(json_out)
            where = f"; partial result saved to {json_out}"
        click.echo(clean(f"error: {exc}{where}"), err=True)
        raise click.exceptions.Exit(1) from None

    if base is not None:
        _refuse_other_workload(base, suite, api, baseline_path, stream)
        refuse_untrue_baseline(base, suite.ignore_eos, baseline_path)
        try:
            _refuse_other_model(base, url, shown, baseline_path)
        except TunerOutOfFiles as exc:  # QA (qa222): a traceback under --compare, one line without it
            out_of_files(exc)

    bar = _ProgressBar() if _draws_a_bar() else None
    try:
        if bar is not None:
            with bar.progress:
                res = run_suite(url, suite, api=api, stream=stream, on_event=bar)
        else:
            res = run_suite(url, suite, api=api, stream=stream)
    except SuiteOverContext as exc:  # nothing sent: the suite's fault, said before the first request
        click.echo(clean(f"error: {exc}"), err=True)
        raise click.exceptions.Exit(2) from None
    except ServerLostError as exc:
        where = ""
        if json_out is not None:
            exc.partial.base_url = shown
            exc.partial.save(json_out)
            where = f"; partial result saved to {json_out}"
        what = "server died mid-suite" if isinstance(exc, ServerDiedError) else "server hung"
        click.echo(clean(f"error: {exc} ({what}){where}"), err=True)
        raise click.exceptions.Exit(1) from None
    except BenchError as exc:
        click.echo(clean(f"error: {exc}"), err=True)
        raise click.exceptions.Exit(1) from None
    except TunerOutOfFiles as exc:
        out_of_files(exc)
    res.base_url = shown
    nothing = bool(res.records) and res.n_failed == len(res.records)
    if nothing:  # not a measurement of the server: no figure at all (a server that is not SGLang's API)
        first = next((r.error for r in res.records if getattr(r, "error", None)), "")
        res.complete, res.error = False, f"every request failed ({len(res.records)}); first: {first}"[:500]
    # The warm-up answered, every measured request failed (each at a length over the model's context,
    # say): no figure either, though the server is SGLang's API.
    measured = [r for r in res.records if r.phase != "warmup"]
    failed_first = next((r for r in measured if not r.ok), None)
    unmeasured = not nothing and bool(measured) and not any(r.ok for r in measured)
    if unmeasured:
        first = (f"{failed_first.phase} {failed_first.prompt} at {counted(failed_first.max_tokens, 'token')}: "
                 f"{server_message(failed_first.error)}")
        res.complete, res.error = False, f"every measured request failed ({len(measured)}); first: {first}"[:500]
    # A count the server cannot have given (more than asked, none, or another than asked with
    # ignore_eos), or verify steps its own speculative setting cannot give (the accept length's bounds,
    # tuner/engine/verify.py): its figures are no measurement of the suite, as a study's trial would be
    # failed.
    from ..engine.verify import clock_problem

    untrue = untrue_answers(res, suite.ignore_eos)
    if untrue and not nothing:
        res.complete, res.error = False, f"{counted(len(untrue), 'answer')} cannot be true; first: {untrue[0]}"[:500]
    # A server frozen (or starved) mid-suite and resumed answers every request, late: figures a study
    # rejects as bad_response (tuner/engine/verify.py), never a result, nor a --compare baseline.
    distorted = None if nothing or unmeasured else clock_problem(res)
    if distorted is not None and not untrue:
        res.complete, res.error = False, f"the figures are distorted: {distorted[1]}"[:500]
    # judged on answers only: a run with no answer says so below, and compares nothing
    retokenized = None if base is None or nothing or unmeasured else other_prompt_tokens(base, res)
    if json_out is not None:
        res.save(json_out)
    if nothing:
        click.echo(clean(f"error: every one of the {counted(len(res.records), 'request')} failed; first: "
                   f"{_plain_text(first)[:300]} (is {shown} an SGLang server? `tuner bench` speaks "
                   "SGLang's /generate and OpenAI's chat API)"
                   + (f"; records saved to {json_out}" if json_out is not None else "")), err=True)
        raise click.exceptions.Exit(1)
    if unmeasured:
        warm = len(res.records) - len(measured)
        click.echo(clean(f"error: every one of the {counted(len(measured), 'measured request')} failed (only the "
                         f"{counted(warm, 'warm-up request')} answered): no figure was measured; "
                         f"first: {first[:300]}"
                         + (f"; records saved to {json_out}" if json_out is not None else "")), err=True)
        raise click.exceptions.Exit(1)
    from ..bench.workload import workload_line, workload_stats

    sent = f"{workload_line(workload_stats(suite))}; api {api}" + (", streamed" if stream else "")
    print_result(res, base, sent)
    for line in res.warnings:
        click.echo(clean(f"warning: {_plain_text(line)[:500]}"), err=True)
    if json_out is not None:
        click.echo(escaped(f"saved {json_out}"))
    if res.n_failed:
        # QA: a dataset request over the context length (SGLang's HTTP 400) was a warning, exit 0: a
        # script took the tables, their failed rows left out, for a measurement of the whole suite
        bad = next((r for r in measured if not r.ok), None) or next(r for r in res.records if not r.ok)
        kept = f"; records in {json_out}" if json_out is not None else ""
        click.echo(clean(f"error: {res.n_failed} of {counted(len(res.records), 'request')} failed or timed out (the "
                         f"figures above leave them out{kept}); first: {bad.phase} {bad.prompt} at "
                         f"{counted(bad.max_tokens, 'token')}: {server_message(bad.error)[:300]}"), err=True)
    if untrue and not nothing:
        click.echo(clean(f"error: {len(untrue)} of {counted(len(res.records) - res.n_failed, 'answer')} cannot be "
                         f"true (first: {untrue[0]}): the figures above are not a measurement of what the suite "
                         "asked"), err=True)
    if distorted is not None:
        click.echo(clean(f"error: the figures above are distorted: {distorted[1]}"), err=True)
    if retokenized is not None:
        click.echo(clean(f"error: {retokenized}"), err=True)
    if res.n_failed or (untrue and not nothing) or distorted is not None or retokenized is not None:
        raise click.exceptions.Exit(1)


#: Suite keys that do not change what is measured: the label, and the timeout (a guard against a
#: hung server, not a figure).
_NOT_MEASURED = ("name", "timeout_s")


def _refuse_other_workload(base: SuiteResult, suite, api: str, path: Path, stream: bool = False) -> None:
    """Raise :class:`ConfigError` naming ``--compare`` when ``base`` was measured with another suite
    (other requests, lengths, concurrencies, repeats, sampling, flushes), did not complete it (saved
    by a run whose server died or hung, or whose answers could not be true), had a request fail or
    time out (saved ``complete: true`` by a run that exited 1, its figures without it), or went
    through another API than this run, or streamed where this run does not (or the other way): every
    speedup printed would compare two workloads, not two servers (QA: a baseline of one suite gave an
    "all (mean)" and per-concurrency speedup against another; a baseline measured without --stream
    was taken by a streamed run, whose server sends a chunk per step and detokenizes as it goes, as a
    study never compares: its baseline and trials share bench.stream).
    A dataset's path and a prompt file's name are not compared (the drawn requests, the SHA-256 and
    the prompts' text are): the same file elsewhere is the same suite, as for a study."""
    from ..config.dataset import without_drop_counts
    from ..config.suite import load_suite

    def measured(d: dict) -> dict:
        try:
            d = load_suite(d).to_dict()  # a result saved by an older version: its defaults filled in
        except ConfigError:
            pass
        # without the counts of rows left out (they follow from the sha256, and a result saved before
        # they were kept has none: tuner.config.dataset.without_drop_counts)
        d = without_drop_counts({k: v for k, v in d.items() if k not in _NOT_MEASURED})
        if isinstance(d.get("dataset"), dict):
            d["dataset"] = {k: v for k, v in d["dataset"].items() if k != "path"}
        if isinstance(d.get("prompts"), list):  # a prompt file's text is compared, not its name
            d["prompts"] = [{k: v for k, v in p.items() if k != "file"} if isinstance(p, dict) else p
                            for p in d["prompts"]]
        return d

    mine, theirs = measured(suite.to_dict()), measured(dict(base.suite or {}))
    differs = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if differs:
        raise ConfigError("--compare", "", f"{path} was measured with another suite ({base.suite.get('name')!r}: "
                                           f"{', '.join(differs)} differ from suite {suite.name!r}): its speedups "
                                           "would compare two workloads; measure the baseline with the same "
                                           "--suite")
    if not base.complete:
        # a partial run (the server died or hung, a study's stage) or one whose answers could not be
        # true: its "all (mean)" is over other rows than this run's, or over no measurement at all
        why = (f"stopped after stage {base.stopped_after}" if base.stopped_after
               else _plain_text(base.error)[:160] or "complete: false")
        raise ConfigError("--compare", "", f"{path} is no complete measurement of its suite ({why}): its "
                                           "figures would compare part of a suite with the whole; measure "
                                           "the baseline again to the end")
    failed = [r for r in base.records if not r.ok]
    if failed:
        # `tuner bench` exits 1 for such a run (its figures leave the failed requests out): as a baseline
        # its rows and "all (mean)" are over fewer requests than this run's, and speedups would read as
        # if both had measured the whole suite (QA: 2 of 8 failed, compared at 1.00x, exit 0 for that)
        first = failed[0]
        of, at = counted(len(base.records), "request"), counted(first.max_tokens, "token")
        said = f"{first.phase} {first.prompt} at {at}: {server_message(first.error)[:160]}"
        raise ConfigError("--compare", "", f"{path} has {len(failed)} of {of} failed or timed out (first: "
                                           f"{said}): its figures leave them out; measure the baseline "
                                           "again with every request answered")
    if base.api != api:
        raise ConfigError("--compare", "", f"{path} was measured through --api {base.api}, this run through "
                                           f"--api {api}: the requests differ; measure the baseline with "
                                           f"--api {api}")
    if bool(base.stream) != bool(stream):
        said = ("with --stream, this run without it" if base.stream else "without --stream, this run with it")
        raise ConfigError("--compare", "", f"{path} was measured {said}: the requests differ (a streamed answer "
                                           "comes a chunk per step); measure the baseline "
                                           + ("with --stream" if stream else "without --stream"))


def _refuse_other_model(base: SuiteResult, url: str, shown: str, path: Path) -> None:
    """Raise :class:`ConfigError` naming ``--compare`` when ``base`` was measured on another model than
    the server at ``url`` runs, by the ``model_path`` each ``/server_info`` says (SGLang 0.5.23 reports
    the one it was started with, ``http_server.py`` ``server_info``): every speedup printed would
    compare two models (QA: org/model-A's baseline against org/model-B read 2.33x, exit 0). Asked
    before any request; a server that does not say, or does not answer (the run then says so), is
    not judged. Raises :class:`tuner.bench.TunerOutOfFiles` when the tuner's own open-file limit
    keeps it from asking (the caller says so as for the run's)."""
    import asyncio

    from ..bench.client import BenchClient, BenchError

    theirs = base.server_info.get("model_path") if isinstance(base.server_info, dict) else None
    if not isinstance(theirs, str):
        return

    async def ask() -> dict | None:
        async with BenchClient(url) as client:
            return await client.server_info()

    try:
        info = asyncio.run(ask())
    except BenchError:
        return
    mine = info.get("model_path") if isinstance(info, dict) else None
    if isinstance(mine, str) and mine != theirs:
        raise ConfigError("--compare", "", f"{path} was measured on model_path {theirs!r}, the server at {shown} "
                                           f"runs {mine!r}: its speedups would compare two models; measure the "
                                           "baseline on this server's model")


def server_message(error) -> str:
    """A failed request's error as one line, a JSON error body read for its message: ``HTTP 400:
    {"error": {"message": M}}`` is ``HTTP 400: M`` (:func:`tuner.bench.client.error_body_message`;
    the client reads it so since, a result saved before holds the body); any other text as
    :func:`_plain_text` gives it."""
    import re

    from ..bench.client import error_body_message

    text = _plain_text(error)
    m = re.fullmatch(r"(HTTP \d{3}): (\{.*\})", text)
    said = None if m is None else error_body_message(m.group(2))
    return text if said is None else f"{m.group(1)}: {_plain_text(said)}"


def _plain_text(text) -> str:
    """One line of a server's answer: an HTML error page's tags dropped, whitespace collapsed."""
    import re

    return " ".join(re.sub(r"<[^<>]*>", " ", str(text or "")).split())
