"""``tuner doctor``: the preflight a user runs on the node before leaving a study for the night.

Each check returns one :class:`Check` (``pass``, ``warn`` or ``fail``; a failure says the fix), in
this order: the server interpreter, the model and GPU facts and the attention backend, SGLang's own
argument handling of the study's command lines, the GPUs, the model files, the port, the storage,
the workdir, the objectives. :func:`run_checks` never raises for a broken precondition (that is a
``fail``); ``study run`` runs the cheap ones (:data:`CHEAP`) before the baseline and stops on a fail.

Nothing is written: the storage is checked inside a transaction that is rolled back (SQLite: a
write lock taken and released on an existing file, else the folder; PostgreSQL: a run's writes on
the study's tables, or a table where they will be made), the workdir with a temporary file removed
at once, and SGLang's argument check runs its parser and resolver in a subprocess of the server interpreter
(:mod:`tuner.sglang.probe`: no model load, nothing downloaded). On the simulator the checks that
make sense run against the simulator: its interpreter must import the tuner, and its own parser
and argument handling take the command lines. A command line that parser refuses (a flag this
SGLang release does not take) is said in argparse's own words, with the study key that wrote the flag.

Why one module of over 400 lines: the checks are one ordered list with one verdict type
(:class:`Check`), and several read what an earlier one found (the interpreter before SGLang's argument
check, the model facts before both); split, each part would pass that state on to the next.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..config.space import SearchSpace
from ..config.study import StudyConfig, objective_concurrency
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig
from .facts import StudyFacts, gather_facts, space_for
from .env_numbers import min_free_gib
from .preflight import named_for_file, check_backends_start
from .storage_probe import sql_writable, sqlite_writable

PASS, WARN, FAIL = "pass", "warn", "fail"
#: SGLang releases the rules were checked against (tuner/sglang/server_args_0_5_23.json).
KNOWN_SGLANG = ("0.5.23",)
#: Checks cheap enough to run before every study run (no subprocess of the server interpreter).
CHEAP = ("gpus", "model files", "port", "storage", "workdir", "open files", "objectives")
#: How many of the space's settings (besides the seeds) SGLang's argument check samples.
SAMPLE_TRIALS = 6


@dataclass(frozen=True)
class Check:
    name: str
    status: str  #: PASS, WARN or FAIL
    message: str  #: what was found; for WARN/FAIL, the fix too

    def line(self) -> str:
        return f"{self.status:4}  {self.name}: {self.message}"


def _python(config: StudyConfig) -> str:
    import sys

    return config.server.python or sys.executable


def _run(argv: list[str], timeout: float = 120.0, env: dict | None = None) -> subprocess.CompletedProcess | str:
    import os

    from ..server.bounded_run import run_bounded

    try:  # bounded even for an import stuck in the kernel (a CUDA init on a wedged GPU)
        return run_bounded(argv, timeout, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)


#: what a study on ``server.backend: model`` needs of a node: nothing (no process, no HTTP)
NO_SERVER = "backend model launches no server"


def _shadowing_tuner() -> str | None:
    """A ``tuner.py`` or ``tuner`` folder in the working folder that is not the tuner running this
    check: ``python -m tuner.sim`` on Python 3.10 imports it instead of the installed package (QA,
    qa179: a user's own tuner.py failed every trial with "No module named tuner.sim", and this check
    said to set server.python)."""
    import os
    from pathlib import Path

    import tuner

    own = Path(tuner.__file__).resolve().parent
    here = Path(os.getcwd())
    if (here / "tuner.py").is_file():
        return "tuner.py"
    # a folder without __init__.py is a namespace portion, which the installed package wins over
    if (here / "tuner" / "__init__.py").is_file() and (here / "tuner").resolve() != own:
        return "tuner/"
    return None


def check_interpreter(config: StudyConfig) -> Check:
    if config.server.backend == "model":
        return Check("interpreter", PASS, f"{NO_SERVER}: this interpreter runs the performance model")
    python = _python(config)
    module = "sglang" if config.server.backend == "sglang" else "tuner"
    # The simulator's server modules too, not the bare package: `import tuner` works from a checkout
    # on the path without a single dependency, and the server (aiohttp) would not start there.
    # SGLang's own dependencies (torch, ...) are the argument check's: it imports its parser there.
    serving = ", tuner.sim.server, tuner.sim.api" if module == "tuner" else ""
    # as the launcher starts the simulator: the working folder off sys.path (Python 3.11+)
    from ..server.launcher import runs_from_working_folder

    safe = module == "tuner" and not runs_from_working_folder()
    r = _run([python, "-c", f"import {module}{serving}; print({module}.__version__)"],
             env={"PYTHONSAFEPATH": "1"} if safe else None)
    shadow = _shadowing_tuner() if module == "tuner" else None
    if (isinstance(r, str) or r.returncode != 0) and shadow is not None:
        return Check("interpreter", FAIL, f"{shadow} in the working folder hides the installed tuner from the "
                     f"simulator ({python} puts the working folder first on its path; Python 3.11 and later "
                     "do not, as the tuner starts them): rename it, or run from another folder")
    if isinstance(r, str) or r.returncode != 0:
        why = r if isinstance(r, str) else (r.stderr.strip().splitlines() or ["no output"])[-1]
        return Check("interpreter", FAIL, f"{python} cannot import {module}{serving and ' and its server'} "
                     f"({why[:200]}); set server.python to the interpreter that has {module} installed "
                     f"with its dependencies")
    version = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "?"
    if module == "tuner":
        from .. import __version__

        if version != __version__:
            return Check("interpreter", WARN, f"{python} has tuner {version}, this is {__version__}: the simulator "
                         f"there may differ; install the same tuner for server.python")
        return Check("interpreter", PASS, f"{python} imports tuner {version} (the simulator)")
    if version not in KNOWN_SGLANG:
        return Check("interpreter", WARN, f"{python} has sglang {version}; the rules were checked against "
                     f"{', '.join(KNOWN_SGLANG)}: read the 'sglang arguments' check below closely (it runs this "
                     "release's own parser and resolver on the study's command lines)")
    return Check("interpreter", PASS, f"{python} imports sglang {version}")


def check_facts(facts: StudyFacts, space: SearchSpace, restricted: str | None) -> Check:
    if facts.conflicts:
        return Check("model and GPU", FAIL, "; ".join(facts.conflicts) + ": correct server.facts or remove it")
    text = "; ".join(facts.lines()) + f"; {space.attention.line()}"
    if restricted:
        text += f"; {restricted}"
    unknown = [what for what, v in (("the model's attention kind", facts.target), ("the GPU generation", facts.gpu))
               if v is None]
    if unknown:
        return Check("model and GPU", WARN, f"{text}; {' and '.join(unknown)} unknown here: state them in "
                     f"server.facts (model_attention, gpu_compute_capability) so the backend fits the node")
    return Check("model and GPU", PASS, text)


def sample_specs(config: StudyConfig, space: SearchSpace) -> list[SpecConfig]:
    """The seeds and an even sample of the space's valid effective settings (trees included)."""
    from .study import seed_trials

    specs = list(seed_trials(config, space))
    valid = space.effective_configs()
    step = max(1, len(valid) // SAMPLE_TRIALS)
    for spec in valid[::step][:SAMPLE_TRIALS]:
        if spec not in specs:
            specs.append(spec)
    return specs


def _expected(space: SearchSpace, spec: SpecConfig | None) -> tuple[bool, int | None]:
    """(SGLang accepts it during argument handling, the draft tokens it resolves) by the rules."""
    if spec is None:
        return True, None
    res = space.resolve(spec)
    if res.violation is not None and res.violation.at_launch:
        return False, None
    return True, res.effective.num_draft_tokens if res.effective else None


def check_sglang_args(config: StudyConfig, space: SearchSpace, backend) -> Check:
    """SGLang's parser and resolver on the baseline's and sampled trials' exact argv, vs the rules."""
    from ..server.command import plan_launch

    if config.server.backend == "model":
        return Check("sglang arguments", PASS, f"{NO_SERVER}; the search space's rules still apply")
    specs = [None] + sample_specs(config, space)
    argvs = [backend.command(spec, port=config.server.port or 30000) for spec in specs]
    if config.server.backend == "sim":
        results = _sim_probe(argvs, config)
    else:
        results = _sglang_probe(argvs, config)
        if isinstance(results, str):
            return Check("sglang arguments", FAIL, results)
    # A command line SGLang's argparse refuses is a flag this SGLang does not take (another release's,
    # one it renamed or dropped, a misspelling in server.extra_args), not a rule of the tuner's: say
    # argparse's own words and the study key that wrote the flag (QA: "SGLang refuses (SystemExit:
    # 2) ... the rules do not match this SGLang", three times, and no flag named)
    for spec, result in zip(specs, results):
        if not result["ok"] and result.get("exception") == "SystemExit":
            pinned = plan_launch(backend.server, None, fixed_args=backend.fixed_args,
                                 max_concurrency=backend.max_concurrency, attention=backend.attention,
                                 log_warnings=False).pinned
            return Check("sglang arguments", FAIL, _parser_refusal(config, space, spec, result["message"], pinned))
    disagree = []
    for spec, result in zip(specs, results):
        ok, draft = _expected(space, spec)
        label = spec.label() if spec else "baseline"
        if result["ok"] != ok:
            said = "accepts" if result["ok"] else f"refuses ({result.get('exception')}: {result.get('message', '')[:120]})"
            disagree.append(f"{label}: SGLang {said}, the rules say {'accept' if ok else 'refuse'}")
        elif ok and draft is not None and result.get("resolved", {}).get("speculative_num_draft_tokens") not in (None, draft):
            disagree.append(f"{label}: SGLang resolves draft tokens "
                            f"{result['resolved']['speculative_num_draft_tokens']}, the rules {draft}")
    if disagree:
        return Check("sglang arguments", FAIL, "; ".join(disagree[:3]) + ": the rules (tuner/sglang/rules.py) do "
                     "not match this SGLang; pin the release they know or report it")
    said = (f"the baseline and {len(specs) - 1} trial command lines pass "
            f"{'the simulator' if config.server.backend == 'sim' else 'SGLang'}'s argument handling as the rules say")
    warnings = backend.launch_warnings()
    if warnings:  # every launch would warn so: said once, as this check's (it used to be 11 bare lines)
        return Check("sglang arguments", WARN, f"{said}, but every launch: {'; '.join(warnings)}")
    return Check("sglang arguments", PASS, said)


def _parser_refusal(config: StudyConfig, space: SearchSpace, spec: SpecConfig | None, said: str,
                    pinned: dict) -> str:
    """One line for a command line SGLang's parser refuses: its words, the study keys (or the
    launcher's pins, ``pinned``) behind the flags it names, and the fix."""
    import re

    from ..server.command import arg_tokens
    from ..sglang.rules import flag_name

    keys, pins = [], []
    for flag in dict.fromkeys(re.findall(r"--[A-Za-z0-9][\w-]*", said)):
        for where, args in (("server.args", config.server.args), ("fixed", space.config.fixed)):
            keys += [f"{where}.{name}" for name, value in args.items() if flag in arg_tokens(name, value)]
        if any(token.split("=", 1)[0] == flag for token in config.server.extra_args):
            keys.append(f"server.extra_args {flag}")
        pins += [f"{flag} {value}" for name, value in pinned.items() if flag_name(name) == flag]
    whose = f" (set by {', '.join(dict.fromkeys(keys))})" if keys else ""
    what = "every launch's" if spec is None else f"trial {spec.label()}'s"
    server = "the simulator" if config.server.backend == "sim" else "this SGLang"
    fix = "remove it, or give it as this release spells it in server.extra_args"
    if not keys and not pins:  # the model, port and speculative flags: the tuner's own, in every launch
        fix = (f"the tuner writes it itself, so no study key can fix it: run an SGLang whose parser takes it "
               f"(the rules were checked against {', '.join(KNOWN_SGLANG)})")
    if pins:  # a pin is the launcher's, not the study's: the study setting it itself leaves it out
        fix = (f"{fix + '; ' if keys else ''}the tuner pins {', '.join(pins)} for every launch: set it yourself "
               f"in server.extra_args as this release spells it (an older SGLang's --cuda-graph-max-bs=N), "
               f"and the pin is left out")
    return f"{server}'s parser refuses {what} command line: {said[:300]}{whose}: {server} does not take " \
           f"the flag as written; {fix}"


def _sglang_probe(argvs: list[list[str]], config: StudyConfig) -> list[dict] | str:
    from ..sglang import probe as probe_module

    with tempfile.TemporaryDirectory(prefix="tuner-doctor-") as tmp:
        path = Path(tmp) / "argv.json"
        # argv[0:3] is "python -m sglang.launch_server": SGLang's parser takes the rest.
        path.write_text(json.dumps({"argvs": [a[3:] for a in argvs]}))
        r = _run([_python(config), probe_module.__file__, str(path)], timeout=600,
                 env={"HF_HUB_OFFLINE": "1", **config.server.env})
    if isinstance(r, str) or r.returncode != 0:
        why = r if isinstance(r, str) else (r.stderr.strip().splitlines() or ["no output"])[-1]
        return f"SGLang's argument check did not run ({why[:200]}); fix server.python"
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])["results"]
    except (ValueError, KeyError, IndexError):
        return f"SGLang's argument check printed no result: {r.stdout[-200:]!r}"


def _sim_probe(argvs: list[list[str]], config: StudyConfig) -> list[dict]:
    """The simulator's own parser and argument handling, in process (it is this tuner's)."""
    import contextlib
    import io
    import logging

    from ..sglang.probe import parser_error
    from ..sim.args import parse_args, resolve_launch
    from ..sim.profile import load_profile

    profile = load_profile(config.server.sim.profile)
    quiet = logging.getLogger("tuner.doctor.sim")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    out = []
    for argv in argvs:
        usage = io.StringIO()
        try:
            with contextlib.redirect_stderr(usage):  # argparse's usage: into the check's line, not doctor's stderr
                plan = resolve_launch(parse_args(argv[3:]), quiet, profile)
        except SystemExit as exc:
            out.append({"ok": False, "exception": "SystemExit", "message": parser_error(usage.getvalue(), exc.code)})
            continue
        except (AssertionError, TypeError, ValueError) as exc:
            out.append({"ok": False, "exception": type(exc).__name__, "message": str(exc)})
            continue
        out.append({"ok": True, "resolved": {"speculative_num_draft_tokens": plan.spec.num_draft_tokens
                                             if plan.spec else None}})
    return out


def check_gpus(config: StudyConfig) -> Check:
    """The server's GPUs, its CUDA_VISIBLE_DEVICES as CUDA reads it (:func:`tuner.server.gpus.cuda_visible`):
    tp_size of them, the first tp_size (SGLang's TP ranks from ``base_gpu_id`` 0) free of others' memory."""
    if config.server.backend in ("model", "sim"):
        return Check("gpus", PASS, f"{NO_SERVER}; no GPU needed" if config.server.backend == "model"
                     else "simulated (the profile's GPUs); no nvidia-smi needed")
    from ..server.gpu_lock import visible_gpus
    from ..server.gpus import cuda_visible, gpu_inventory, too_few_gpus

    gpus, tp, visible = gpu_inventory(), config.server.tp_size, visible_gpus(config.server.env)
    if gpus is None:
        return Check("gpus", FAIL, "nvidia-smi is not available or failed: run doctor on the GPU node")
    own, stop = ([str(i) for i in range(len(gpus))], None) if visible is None else cuda_visible(visible, len(gpus))
    if len(own) < tp:
        return Check("gpus", FAIL, too_few_gpus(len(own), len(gpus), tp, visible, stop, config.server.env))
    unplaced = _cuda_order_unknown(config, gpus, visible, own[:tp])
    if unplaced:
        return Check("gpus", WARN, unplaced)
    busy = [f"GPU {i}: {g['memory_total_mib'] - g['memory_free_mib']} MiB in use" for i in own[:tp] if i is not None
            and (g := gpus[int(i)])["memory_free_mib"] < 0.9 * g["memory_total_mib"]]
    if busy:
        return Check("gpus", WARN, f"{'; '.join(busy)}: another process holds GPU memory; stop it before the "
                     f"night or the server may run out of memory")
    # a node of several GPU models is said as such, and the server's named (QA, qa167: a node of an
    # A100 and an H100 passed as "2 x NVIDIA A100-SXM4-80GB (compute capability 8.0)", the server on the H100)
    kinds: dict[tuple[str, str], int] = {}
    for g in gpus:
        kinds[(g["name"], g["compute_cap"])] = kinds.get((g["name"], g["compute_cap"]), 0) + 1
    node = " + ".join(f"{n} x {name} (compute capability {cap})" for (name, cap), n in kinds.items())
    named = ",".join(i or "?" for i in own[:tp])
    theirs = dict.fromkeys(gpus[int(i)]["name"] for i in own[:tp] if i is not None)
    if len(kinds) > 1 and theirs:
        named += ": " + " + ".join(theirs)
    return Check("gpus", PASS, f"{node}, {tp} needed (GPUs {named}), memory free")


def _cuda_order_unknown(config: StudyConfig, gpus: list[dict], visible, judged: list) -> str | None:
    """Why the server's GPUs (``judged``: the first tp_size of them as nvidia-smi indices) cannot be
    told on this node, with the fix; None when they can. CUDA numbers the GPUs fastest first unless
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA C Programming Guide, "CUDA Environment Variables"; SGLang
    and PyTorch leave it as it is), nvidia-smi by PCI bus: on a node mixing GPU models, an index (or
    no CUDA_VISIBLE_DEVICES) names a GPU nvidia-smi cannot point at, unless the server has every GPU
    of the node. A UUID or a MIG id is the same GPU in either order. QA (qa190): on an A100 (PCI 0)
    + H100 node, ``CUDA_VISIBLE_DEVICES=0`` passed as "GPUs 0: NVIDIA A100-SXM4-80GB, memory free"
    while the server would run on the H100, whose memory another process held (the facts of
    :func:`tuner.server.gpus.server_gpu_facts` already said "unknown" there)."""
    from ..server.gpus import entry_index, numbered_as_listed

    tp = config.server.tp_size
    kinds = {(g["name"], g["compute_cap"]) for g in gpus}
    by_index = visible is None or any(entry_index(gpu, {}) is not None for gpu in visible[:tp])
    whole_node = set(judged) == {str(i) for i in range(len(gpus))}
    if len(kinds) < 2 or not by_index or whole_node or numbered_as_listed(config.server.env):
        return None
    named = (f"CUDA_VISIBLE_DEVICES={','.join(visible)!r}, "
             f"{'server.env' if 'CUDA_VISIBLE_DEVICES' in config.server.env else 'this shell'}'s"
             if visible is not None else "CUDA_VISIBLE_DEVICES unset")
    return (f"CUDA numbers GPUs fastest first (CUDA_DEVICE_ORDER is not PCI_BUS_ID), nvidia-smi by PCI bus: on "
            f"this node of {' + '.join(sorted(name for name, _ in kinds))} the server's {tp} GPU(s) ({named}) "
            f"need not be nvidia-smi's GPU(s) {','.join(i or '?' for i in judged)}, so neither which GPUs nor "
            f"their free memory can be told; set server.env.CUDA_DEVICE_ORDER: PCI_BUS_ID (or name the GPUs "
            f"by UUID in CUDA_VISIBLE_DEVICES)")


def check_model_files(config: StudyConfig) -> Check:
    if config.server.backend == "model":
        return Check("model files", PASS, f"{NO_SERVER}; no weights loaded")
    if config.server.backend == "sim":
        return Check("model files", PASS, "the simulator loads no weights")
    from ..sglang.model import find_config_json

    missing = [f"{key} {path!r}" for key, path in (("server.model_path", config.server.model_path),
                                                    ("server.draft_model_path", config.server.draft_model_path))
               if path and find_config_json(path, config.server.env) is None]
    if not config.server.draft_model_path:
        missing.append("server.draft_model_path (unset)")
    if missing:
        return Check("model files", FAIL, f"no config.json for {', '.join(missing)} on this node (local folder or "
                     f"Hugging Face cache): download the model first or fix the path")
    return Check("model files", PASS, "the model and the draft have a config.json here")


def check_port(config: StudyConfig) -> Check:
    from ..server.ports import port_taken

    host, port = config.server.host, config.server.port
    if config.server.backend == "model":
        return Check("port", PASS, f"{NO_SERVER}; no port needed")
    if port == 0:
        return Check("port", PASS, "server.port 0: each launch takes a free port")
    taken = port_taken(host, port)
    if taken is not None:
        return Check("port", FAIL, str(taken))  # in use, or privileged (EACCES)
    return Check("port", PASS, f"port {port} on {host} is free")


def check_storage(config: StudyConfig, *, outage_ok: bool = False) -> Check:
    """``outage_ok`` (study run's): a database server not answering now warns; the run waits for it."""
    from .patience import is_transient, said
    from .urls import describe_error, redact, resolve_url, scheme_problem

    try:
        url = resolve_url(config.storage, "storage")
    except ConfigError as exc:
        return Check("storage", FAIL, str(exc))
    problem = scheme_problem(url)
    if problem:  # a mistyped scheme, another database, no driver: no server to ask
        return Check("storage", FAIL, problem)
    shown = redact(url)
    lax: list[str] = []
    if url.startswith("sqlite") and (unwritable := sqlite_file_unwritable(url)):
        return Check("storage", FAIL, f"{shown}: {unwritable}")
    try:
        if url.startswith("sqlite"):
            # study run's: a lock another worker holds is waited out by the run, not here (QA: a
            # lock held 10 s failed the run, exit 1, "check the URL"; `run --study` waited for it);
            # 2 s: another worker's write (milliseconds) is waited for, not warned of as an outage
            sqlite_writable(url, wait_s=2 if outage_ok else 10)
        else:
            lax = sql_writable(url)
    except Exception as exc:  # noqa: BLE001 - any driver error is a failed check, reported redacted
        # the driver's own error and its words (describe_error), not SQLAlchemy's wrapping of it, which
        # said its type twice: "OperationalError: (psycopg2.OperationalError) connection ..." (QA, qa190)
        first = describe_error(exc, url)
        told = f"{shown}: {first[:200]}"
        # What fixes a read-only database, a lock held, no connection slot or a full disk, as the
        # run's own lines say it (tuner.engine.patience.said): "check the URL" named no fix for a
        # database set read-only (QA, qa154)
        hinted = said(exc, lambda _: told)
        if outage_ok and is_transient(exc) and (not url.startswith("sqlite") or "locked" in first.lower()):
            waits = "the run waits for it" if hinted != told else "does not answer now; the run waits for it"
            return Check("storage", WARN, f"{hinted}: {waits}")
        if hinted != told:
            return Check("storage", FAIL, hinted)
        from .storage import _role_refused

        if (rights := _role_refused(exc, url)) is not None:  # as `study create` names the GRANT
            return Check("storage", FAIL, f"{told}: {rights}")
        if (fix := ssl_verification_fix(first)) is not None:
            return Check("storage", FAIL, f"{told}: {fix}")
        if NO_PASSWORD_WORDS in first:
            return Check("storage", FAIL, f"{told}: {no_password_fix(url)}")
        return Check("storage", FAIL, f"{told}: check the URL, the server and the user's rights")
    if lax:
        return Check("storage", WARN, f"{shown} is reachable and writable, but {' and '.join(lax)}: a crash of the "
                     "machine can lose trials the database server had acknowledged (QA: a worker then failed "
                     "on a trial that vanished); set it on in postgresql.conf for a study")
    return Check("storage", PASS, f"{shown} is reachable and writable")


def ssl_verification_fix(said: str) -> str | None:
    """The fix when libpq could not verify the server's certificate, as its URL asks
    (``sslmode=verify-ca`` or ``verify-full``), by its words in ``said`` (fe-secure-openssl.c);
    None for any other error. QA (qa190): the tuner keeps an error's first line, and libpq's fix for a
    missing CA file is its second ("Either provide the file, use the system's trusted roots with
    sslrootcert=system, or change sslmode ..."): doctor said "root certificate file ... does not exist:
    check the URL, the server and the user's rights", and the same for a CA that did not sign the
    server's certificate, or a host the certificate does not name."""
    relax = "or sslmode=require in the URL to encrypt without verifying the server"
    if "root certificate file" in said:
        return (f"the URL asks libpq to verify the server against a CA file it cannot read: give "
                f"sslrootcert=PATH of the CA that signed the server's certificate (sslrootcert=system: the "
                f"system's CAs), {relax}")
    if "certificate verify failed" in said:
        return (f"the server's certificate is not signed by the CA of sslrootcert: give the CA file that signed "
                f"it, {relax}")
    if "does not match host name" in said:
        return ("the server's certificate does not name the URL's host: write the host as the certificate names "
                "it, or sslmode=verify-ca in the URL to verify the CA but not the name")
    return None


#: libpq's words when the server asks for a password and the client has none (fe-auth.c).
NO_PASSWORD_WORDS = "no password supplied"


def no_password_fix(url: str) -> str:
    """Where libpq looks for the password a server asked for and found none, for the storage at
    ``url``: the URL, ``PGPASSWORD``, then the password file (``passfile=`` in the URL, else
    ``$PGPASSFILE``, else ``~/.pgpass``), which libpq ignores, with only a WARNING on stderr, when
    group or others may read it (fe-connect.c, ``passwordFromFile``). QA (qa190): a ~/.pgpass of mode
    0644 failed doctor as "fe_sendauth: no password supplied: check the URL, the server and the
    user's rights", the fix (chmod 600) never named."""
    import os
    import stat

    from .urls import connect_url

    try:
        named = connect_url(url).query.get("passfile")
    except Exception:  # noqa: BLE001 - the URL connected far enough to be asked a password
        named = None
    if isinstance(named, tuple):
        named = named[-1]
    path = Path(named or os.environ.get("PGPASSFILE") or Path.home() / ".pgpass").expanduser()
    try:
        mode = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISREG(mode) and mode & 0o077:
        return (f"the server asks for a password, and libpq ignores the password file {path}, which others "
                f"may read (mode {stat.S_IMODE(mode):04o}): chmod 600 {path}")
    return ("the server asks for a password and none was given: write it in the URL (user:PASSWORD@host, "
            f"as it is or percent-encoded), or set PGPASSWORD, or add a line host:port:database:user:password "
            f"to {path} (mode 0600), its host written as in the URL")


def sqlite_file_unwritable(url: str) -> str | None:
    """Why this user cannot write the SQLite file of ``url`` (opened for writing, nothing written) or
    its folder (where SQLite writes its journal), as ``study run`` says it
    (tuner.cli.study_target.check_storage_writable); None when it can, or there is no file yet.
    QA (qa167): SQLite opens a file it may not write read-only, and the probe's ``BEGIN IMMEDIATE``
    takes its lock all the same: doctor passed another user's 0644 database as "reachable and
    writable", which the run refuses; so was a file of mode 0666 in another user's folder (the lock
    needs no journal; the first write does)."""
    from ..config.files import sqlite_file_refused
    from .urls import sqlite_path

    path = sqlite_path(url)
    try:
        if path is None or not path.exists():  # no file yet: its folder is the probe's
            return None
        return sqlite_file_refused(path)
    except OSError:  # a folder this user may not search: the probe says it
        return None


def check_workdir(config: StudyConfig) -> Check:
    from ..config.files import check_writable

    workdir = Path(config.workdir or Path("studies") / config.name)
    try:
        check_writable(workdir, "workdir", folder=True)
    except ConfigError as exc:
        return Check("workdir", FAIL, str(exc))
    try:
        least = min_free_gib()
    except ConfigError as exc:
        return Check("workdir", FAIL, str(exc))
    existing = workdir
    while not existing.exists():
        existing = existing.parent
    free_gib = shutil.disk_usage(existing).free / 2**30
    if free_gib < least:
        return Check("workdir", FAIL, f"{workdir}: only {free_gib:.1f} GiB free; server logs need room: free "
                     f"disk or set workdir elsewhere")
    return Check("workdir", PASS, f"{workdir} is writable, {free_gib:.0f} GiB free")


#: Files a worker holds for certain beside the sweep's connections: stdio (3), the event loop's epoll,
#: the watchdog's connection, the storage (SQLite's file). Below that no sweep can run; above it, the
#: rest (the server's log, the journal, PostgreSQL's 4 sessions) may still not fit, which the run itself
#: finds (:class:`tuner.bench.open_files.TunerOutOfFiles`). Measured (QA, qa217): the demo study peaks
#: at 44-46 at C=32 and measured at ``ulimit -n`` 40.
OPEN_FILES_BESIDE_SWEEP = 6


def check_open_files(config: StudyConfig) -> Check:
    """Whether this process may open the sweep's connections and its own files at once (``ulimit -n``;
    its soft limit was raised as far as the hard one allows as the command started:
    :func:`tuner.bench.open_files.raise_soft_limit`). A run past it would stop at the baseline's sweep,
    after a model load (:class:`tuner.bench.open_files.TunerOutOfFiles`)."""
    import resource

    if config.server.backend == "model":
        return Check("open files", PASS, "server.backend model: no connections")
    from ..server.command import study_max_concurrency

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    concurrency = study_max_concurrency(config)
    need = concurrency + OPEN_FILES_BESIDE_SWEEP
    if soft != resource.RLIM_INFINITY and soft < need:
        return Check("open files", FAIL, f"ulimit -n is {soft} (the hard limit too), under the {need} the sweep at "
                     f"concurrency {concurrency} needs at the least with the tuner's own files; raise it where the tuner "
                     "starts (`ulimit -n 65536`, a Slurm job's or a container's nofile limit)")
    return Check("open files", PASS, f"ulimit -n {'unlimited' if soft == resource.RLIM_INFINITY else soft}, "
                 f"the sweep at concurrency {concurrency} needs {need} at the least")


def check_objectives(config: StudyConfig) -> Check:
    from ..config.suite import load_suite

    suite = load_suite(config.bench.suite)
    sweep = set(suite.sweep.concurrencies)
    missing = []
    for name in config.objectives:
        c = objective_concurrency(name)
        if c is not None and c not in sweep:
            missing.append(f"{name} needs concurrency {c} in the sweep")
        if c is None and suite.single.lengths == []:
            missing.append(f"{name} needs the single-request phase")
    if missing:
        return Check("objectives", FAIL, f"{'; '.join(missing)} (suite {suite.name} sweeps "
                     f"{sorted(sweep) or 'nothing'}): add them to the suite or change objectives")
    return Check("objectives", PASS, f"{', '.join(config.objectives)} are measured by suite {suite.name}")


def _study_record(config: StudyConfig, source, record: dict) -> tuple[dict | None, Check | None]:
    """The attention record the study's launches use, as ``study run`` and ``tuner launch`` judge it
    (:func:`tuner.engine.study.check_file_against_study`): this node's ``record`` for a study not in
    storage yet (or one stored with the same backend, or a storage unreadable here: the storage
    check says so), None for one an older tuner made (the backend its launches ran:
    :func:`tuner.engine.facts.older_study_record`). A stored study that the file no longer
    describes, or whose backend this node would not launch, is a failing check in run's words
    (run refuses it at once), and the node's ``record`` is used for the rest. A storage that did
    not answer :func:`run_checks`' one question (:func:`tuner.engine.silence.silent`) is not asked
    again: unread, as unreadable (QA, qa190: a server that takes the connection and never answers
    cost doctor this read's connect timeout and then the storage check's, 21 s for one line)."""
    from .silence import silent
    from .study import StorageUnreadable, check_file_against_study
    from .urls import resolve_url

    try:
        if silent(resolve_url(config.storage, "storage")):
            return record, None
    except ConfigError:  # an unset variable: check_file_against_study and the storage check say it
        pass
    try:
        return (None if check_file_against_study(config, source, record) is None else record), None
    except StorageUnreadable:
        return record, None
    except ConfigError as exc:
        return record, Check("stored study", FAIL, str(exc))


def _ask_storage(config: StudyConfig) -> None:
    """:func:`tuner.engine.silence.ask_storage` for the study's storage (a URL that does not resolve
    is the storage check's line)."""
    from .silence import ask_storage
    from .urls import resolve_url

    try:
        url = resolve_url(config.storage, "storage")
    except ConfigError:
        return
    ask_storage(url)


def run_checks(config: StudyConfig, *, cheap_only: bool = False, source="study") -> list[Check]:
    """Every check (or the :data:`CHEAP` ones) for the study on this node, in order. ``source``: the
    study file's path, which a failure of the study's own settings names (as `study create` does).
    A study already in storage is judged with the attention backend its launches use (one an older
    tuner made: the backend they ran), as ``study run`` and ``tuner launch`` judge it."""
    from ..config.suite import load_suite
    from .backends import ServerBackend

    checks: list[Check] = []
    if not cheap_only:
        checks.append(check_interpreter(config))
        space = SearchSpace.load(config.search_space)
        try:
            facts = gather_facts(config.server)
            from .facts import attention_record, choose_attention

            record = attention_record(choose_attention(config, space.config.fixed, facts), facts)
            # a database server asked once whether it answers: the checks that read it reuse a
            # silence (tuner.engine.silence), as `study run` asks once before its own
            # (tuner.engine.preflight); asked after the interpreter's subprocess, so a silence is
            # still remembered (for the patience) when the storage check comes
            _ask_storage(config)
            record, stored = _study_record(config, source, record)
            if stored is not None:
                checks.append(stored)
            space, restricted = space_for(space, config, record)
            if not facts.conflicts:  # what `study create` refuses (a contradiction is said below)
                check_backends_start(facts, space.rules_context, source)
        except ConfigError as exc:  # a lower layer's "study: KEY: ..." names the study file
            named = named_for_file(exc, source) if exc.source == "study" else exc
            checks.append(Check("model and GPU", FAIL, str(named)))
        else:
            checks.append(check_facts(facts, space, restricted))
            if checks[0].status != FAIL:
                backend = ServerBackend(config, space.config.fixed, load_suite(config.bench.suite),
                                        algorithm=space.config.algorithm, attention=space.attention)
                checks.append(check_sglang_args(config, space, backend))
            else:
                checks.append(Check("sglang arguments", WARN, "not run: the server interpreter failed above"))
    checks += [check_gpus(config), check_model_files(config), check_port(config),
               check_storage(config, outage_ok=cheap_only), check_workdir(config), check_open_files(config),
               check_objectives(config)]
    return checks
