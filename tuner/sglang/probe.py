"""Ask SGLang itself what it does with command lines: its own parser and resolver, no model load.

Run as a script by the *server's* interpreter (the one that has sglang; it need not have the tuner):

    python .../tuner/sglang/probe.py ARGV_JSON_FILE   ->  one JSON object on stdout

The file holds ``{"argvs": [[...], ...]}``: each an ``sglang.launch_server`` argv without the program
(``--model-path M --tp-size 8 ...``). For each, the probe runs SGLang 0.5.23's
``prepare_server_args`` (``srt/server_args.py``: the real ``argparse`` parser, ``--config`` merging)
and ``ServerArgs.resolve_once`` (``arg_groups/pipeline.py``: every resolution hook, the speculative
one included), then ``ServerArgs.check_server_args`` (``arg_groups/validation_hook.py``, which SGLang's
launch runs next, still before loading anything), which reads the model's ``config.json`` and the GPUs but loads no weights. A release
without ``resolve_once`` (0.5.18 and older) handles the arguments in ``ServerArgs.__post_init__``,
inside ``prepare_server_args``; its resolved fields are the record's own attributes. It reports
``{"ok", "exception", "message", "resolved": {field: value}, "warnings": [...]}`` per argv, and
``{"sglang_version"}``. A command line SGLang's argparse refuses reports ``exception: "SystemExit"``
and, as its message, argparse's own error line (``sglang serve: error: unrecognized arguments:
--no-enable-tf32-matmul``; argparse prints it on stderr, then exits 2), so the caller can name the
flag. ``HF_HUB_OFFLINE=1`` is set: nothing is downloaded.

Only the standard library and sglang are imported, and nothing of the tuner: the server interpreter
may not have the tuner installed. ``tuner doctor`` runs it (``tuner.engine.doctor``), and so does
``benchmarks/sglang_agreement.py`` against an unpacked SGLang on CPU.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys

#: The resolved fields the tuner's rules have an opinion on.
FIELDS = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
          "speculative_num_draft_tokens", "max_running_requests", "attention_backend", "page_size")


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def probe(argv: list[str]) -> dict:
    from sglang.srt.server_args import prepare_server_args

    collect = _Collect()
    logging.getLogger().addHandler(collect)
    usage = io.StringIO()
    try:
        try:
            with contextlib.redirect_stderr(usage):  # argparse's usage and error line (Lib/argparse.py, error)
                args = prepare_server_args(list(argv))
            # Releases before the resolution pipeline (0.5.18 and older: no ServerArgs.resolve_once nor
            # resolved_dict) handle the arguments in ServerArgs.__post_init__, which prepare_server_args
            # has run by now: every one of their refusals is raised above
            if hasattr(args, "resolve_once"):
                args.resolve_once()
            # Then SGLang's own launch checks, which its Engine runs right after resolve_once and before
            # anything loads (entrypoints/engine.py line 1165, ``server_args.check_server_args()``:
            # arg_groups/validation_hook.py, e.g. pipeline parallelism with EAGLE3, chunked_prefill_size
            # not a multiple of page_size, nnodes not dividing tp_size; QA qa194: doctor passed those, and
            # every launch ended there)
            if hasattr(args, "check_server_args"):
                args.check_server_args()
        except SystemExit as exc:  # argparse: usage on stderr, exit 2
            return {"ok": False, "exception": "SystemExit", "message": parser_error(usage.getvalue(), exc.code),
                    "warnings": collect.lines}
        except BaseException as exc:  # noqa: BLE001 - report whatever SGLang raises
            return {"ok": False, "exception": type(exc).__name__, "message": str(exc), "warnings": collect.lines}
        resolved = args.resolved_dict() if hasattr(args, "resolved_dict") else dict(vars(args))
        return {"ok": True, "resolved": {k: resolved.get(k) for k in FIELDS}, "warnings": collect.lines}
    finally:
        logging.getLogger().removeHandler(collect)


def parser_error(stderr: str, code) -> str:
    """What argparse said when it stopped: its last line (``PROG: error: ...``), else the exit code."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else str(code)


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with open(sys.argv[1]) as f:
        argvs = json.load(f)["argvs"]
    import sglang

    out = {"sglang_version": getattr(sglang, "__version__", None), "results": [probe(a) for a in argvs]}
    sys.stdout.write("\n" + json.dumps(out, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
