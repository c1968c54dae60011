"""Check the request table of ``tests/sim/test_sim_requests.py`` against SGLang's own code.

Every ``/generate`` row whose answer SGLang's JSON contract or its sampling-parameter check decides
is run through that code from an unpacked SGLang source tree: ``api/v1/api_types.py``
(``GenerateRequest.from_json_value``; a ``JsonContractError`` is the ``contract`` shape) and
``srt/sampling/sampling_params.py`` (``SamplingParams(**params)`` then ``.verify``; a
``ValueError`` is the ``native`` shape). The row's status shape and message must be what SGLang's
code produced. Rows refused by other layers (FastAPI, the tokenizer manager) are checked for their
message in SGLang's source text instead; rows the simulator refuses for itself
(``does not implement``) are listed as such, and rows answered 500 (an exception no route catches,
``plain`` shape) are counted as read from the source, not run.

Dev-time only; the tuner never runs this. Needs ``msgspec`` (SGLang's contract is msgspec
structs) and the project's test dependencies in the interpreter that runs it.

    pip download sglang==0.5.23 --no-deps -d /tmp/sgl && unzip -q /tmp/sgl/sglang-*.whl -d /tmp/sgl/src
    python tools/sglang_request_table.py /tmp/sgl/src/sglang
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def sglang_checks(src: Path):
    """SGLang's contract module and SamplingParams class, without importing the sglang package
    (its ``__init__`` pulls in torch): the watermarking import is replaced by an inert stand-in."""
    for pkg in ("sglang", "sglang.srt", "sglang.srt.sampling", "sglang.srt.sampling.watermarking"):
        sys.modules.setdefault(pkg, types.ModuleType(pkg))
    core = types.ModuleType("sglang.srt.sampling.watermarking.core")
    core.WatermarkRequestConfig = type("WatermarkRequestConfig", (), {})
    core.normalize_watermark_request = lambda value: value
    sys.modules[core.__name__] = core
    api = _load("sglang_api_types", src / "api" / "v1" / "api_types.py")
    params = _load("sglang.srt.sampling.sampling_params", src / "srt" / "sampling" / "sampling_params.py")
    return api, params.SamplingParams


def sglang_answer(api, sampling_params, body: dict) -> tuple[str, str | None]:
    """("contract", message), ("native", message) or ("ok", None), as SGLang's code decides."""
    try:
        api.GenerateRequest.from_json_value(body)
    except api.JsonContractError as exc:
        return "contract", str(exc)
    params = body.get("sampling_params")
    for p in params if isinstance(params, list) else [params or {}]:
        try:
            sampling_params(**p).verify(vocab_size=160_000)
        except ValueError as exc:
            return "native", str(exc)
    return "ok", None


def in_source(src: Path, message: str) -> bool:
    """Whether the message's fixed words (before any formatted value) are in SGLang's Python source."""
    head = re.split(r"\d|\(|'", message, maxsplit=1)[0].strip()
    return any(head in p.read_text(errors="replace") for p in (src / "srt").rglob("*.py"))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    src = Path(sys.argv[1])
    sys.path.insert(0, str(ROOT / "tests"))
    from sim.test_sim_requests import NOT_IMPLEMENTED, ROWS

    api, sampling_params = sglang_checks(src)
    counts = {"agree": 0, "DISAGREE": 0, "in source": 0, "NOT in source": 0, "simulator's own": 0, "500, read": 0,
              "other route": 0}
    for case, route, body, _, _, shape, text in ROWS:
        if route != "/generate" or isinstance(body, bytes) or shape == "fastapi":
            counts["other route"] += 1  # FastAPI's pydantic layer and the OpenAI routes are not run here
            continue
        got_shape, got_text = sglang_answer(api, sampling_params, body)
        if shape == "plain" and got_shape == "ok":
            # an uncaught IndexError / AttributeError past both checks (io_struct.py indexing, read
            # from the source: each row's comment names the line); not run here
            counts["500, read"] += 1
            print(f"{'500, read':16} {case:28} table: plain {text!r}; SGLang's checks: ok")
            continue
        if shape == "native" and got_shape == "ok":
            kind = "simulator's own" if text.startswith(NOT_IMPLEMENTED) else (
                "in source" if in_source(src, text) else "NOT in source")
            verdict = kind
        else:
            same = got_shape == shape and (text is None or (got_text or "").startswith(text))
            verdict = "agree" if same else "DISAGREE"
        counts[verdict] += 1
        print(f"{verdict:16} {case:28} table: {shape} {str(text)[:60]!r}; SGLang: {got_shape} {str(got_text)[:60]!r}")
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return 1 if counts["DISAGREE"] or counts["NOT in source"] else 0


if __name__ == "__main__":
    sys.exit(main())
