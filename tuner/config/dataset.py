"""Workload datasets: the ``dataset:`` key of a suite file, and the two file layouts it reads.

Why the file formats are parsed here, in the config layer, and not in :mod:`tuner.bench`: a suite
is validated once, when the study file is loaded (every line of the dataset checked before anything
is written), and the config layer may not import the benchmark layer above it. The benchmark layer
receives a loaded :class:`tuner.config.suite.Suite` whose prompts already carry every drawn request,
and computes the workload's statistics from it (:mod:`tuner.bench.workload`).

Layouts:

* ``jsonl``: one JSON object per line, ``{"prompt": TEXT}`` or ``{"messages": [{"role": ..,
  "content": ..}, ...]}`` (OpenAI chat), with optional ``max_tokens`` (the request's output length),
  ``category`` (or ``name``: a label counted in the workload statistics) and ``id``. Blank lines
  and lines starting with ``#`` are skipped.
* ``sharegpt``: a JSON list of ``{"id": .., "conversations": [{"from": "human"|"gpt", "value": ..},
  ...]}``, as ShareGPT dumps (and SGLang's ``bench_serving --dataset-name sharegpt``) have it. The
  pairing is SGLang 0.5.23's (``benchmark/datasets/sharegpt.py`` ``sample_sharegpt_requests``): the
  first turn is the prompt and the second the reply, whatever their roles; a conversation with fewer
  than two turns, or whose prompt or reply is under 2 tokens, is dropped. Tokens are characters / 4
  (:func:`estimate_tokens`, an estimate: the tuner has no tokenizer); the reply's length is the
  request's output length, capped at ``max_output_tokens``.

Sampling is deterministic: the requests that pass the length filters are ordered by a SHA-256 of
``(seed, position)`` and the first ``n`` kept, in that order (without ``n``: all, in file order), so the same file, ``n`` and ``seed``
give the same requests on every machine and Python version. The file's SHA-256 is recorded: a
study created again after the file changed is refused as a different suite.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from .paths import NonEmptyPathText
from .yamlfile import (MAX_DATASET_BYTES, ConfigError, RepeatedKey, StrictModel, decode_utf8, lone_surrogate,
                       no_repeated_keys, read_bytes_capped, surrogate_message)

#: Characters per token assumed where a length must be estimated without a tokenizer (the same
#: rule of thumb the simulator uses for prompts).
CHARS_PER_TOKEN = 4
#: Roles an OpenAI chat message may have.
ROLES = ("system", "user", "assistant", "tool", "developer")


class ChatMessage(StrictModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str


class DatasetSpec(StrictModel):
    """``dataset:`` in a suite: which file, which layout, how many requests and which ones."""

    path: NonEmptyPathText  #: relative to the suite file (an inline suite: the study file)
    #: the layout; default from the suffix: ``.jsonl`` -> jsonl, ``.json`` -> sharegpt
    format: Literal["jsonl", "sharegpt"] | None = None
    n: int | None = Field(None, ge=1)  #: requests drawn (default: all that pass the filters)
    seed: int = 0
    #: output length of a JSONL request without its own ``max_tokens``
    default_max_tokens: int = Field(256, ge=1)
    #: every request's output length is capped here (ShareGPT replies, long JSONL max_tokens)
    max_output_tokens: int = Field(1024, ge=1)
    min_output_tokens: int = Field(1, ge=1)  #: requests shorter than this are dropped
    min_prompt_chars: int = Field(1, ge=1)  #: prompts shorter than this are dropped
    max_prompt_chars: int | None = Field(None, ge=1)  #: prompts longer than this are dropped
    #: the file's SHA-256: recorded at load; when given in a suite file, the file must match it
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _ranges(self):
        if self.max_prompt_chars is not None and self.max_prompt_chars < self.min_prompt_chars:
            raise ValueError("max_prompt_chars must not be below min_prompt_chars")
        if self.min_output_tokens > self.max_output_tokens:
            raise ValueError("min_output_tokens must not be above max_output_tokens")
        return self

    def layout(self) -> str:
        if self.format is not None:
            return self.format
        return "sharegpt" if self.path.lower().endswith(".json") else "jsonl"


def estimate_tokens(text: str) -> int:
    """A length in tokens estimated from characters (no tokenizer): at least 1."""
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def messages_text(messages: list[dict]) -> str:
    """The text of a chat request sent as raw text (``/generate``, ``/v1/completions``): the turns'
    contents, one paragraph each, with no chat template (applying the model's template is what
    ``bench.api: chat`` is for)."""
    return "\n\n".join(m["content"] for m in messages)


def _row_error(source: str, where: str, message: str) -> ConfigError:
    return ConfigError(source, where, message)


def _real_text(text: str, source: str, where: str) -> None:
    """Refuse a lone UTF-16 surrogate (a JSON ``"\\ud800"`` escape without its pair): Python holds
    it, but it cannot be encoded, so every request sending it would fail with an HTTP 500."""
    bad = lone_surrogate(text)
    if bad is not None:
        raise _row_error(source, where, surrogate_message(text, bad))


def _jsonl_rows(path: Path, source: str, text: str) -> list[dict[str, Any]]:
    rows = []
    # Lines end at "\n" only: str.splitlines() would also split inside a JSON string at U+2028,
    # U+2029 or U+0085, which JSON allows raw (a "\r" before the "\n" is stripped below).
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"line {lineno}"
        try:
            obj = json.loads(stripped, object_pairs_hook=no_repeated_keys)
        except json.JSONDecodeError as exc:
            raise _row_error(source, where, f"not valid JSON ({exc.msg})") from None
        except RepeatedKey as exc:  # (a ValueError: before the catch-all below)
            raise _row_error(source, f"{where}: {exc}", RepeatedKey.FIX) from None
        except (ValueError, RecursionError) as exc:  # a number past Python's digit cap; deep nesting
            raise _row_error(source, where, f"not a request Python will read ({type(exc).__name__})") from None
        if not isinstance(obj, dict):
            raise _row_error(source, where, "expected a JSON object with prompt or messages")
        unknown = sorted(set(obj) - {"prompt", "messages", "max_tokens", "category", "name", "id"})
        if unknown:
            raise _row_error(source, f"{where}: {unknown[0]}", "unknown key; expected prompt or messages, "
                             "and optionally max_tokens, category (or name), id")
        has_prompt, has_messages = "prompt" in obj, "messages" in obj
        if has_prompt == has_messages:
            raise _row_error(source, where, "give prompt (text) or messages (OpenAI chat), exactly one")
        messages = None
        if has_prompt:
            prompt = obj["prompt"]
            if not isinstance(prompt, str) or not prompt.strip():
                raise _row_error(source, f"{where}: prompt", "must be non-empty text")
            _real_text(prompt, source, f"{where}: prompt")
        else:
            messages = _messages(obj["messages"], source, f"{where}: messages")
            prompt = messages_text(messages)
        max_tokens = obj.get("max_tokens")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                       or max_tokens < 1):
            raise _row_error(source, f"{where}: max_tokens", f"must be a positive integer, got {max_tokens!r}")
        category = obj.get("category", obj.get("name"))
        if category is not None and not isinstance(category, str):
            raise _row_error(source, f"{where}: category", "must be text")
        rows.append({"line": lineno, "text": prompt, "messages": messages, "max_tokens": max_tokens,
                     "category": category or None, "id": obj.get("id")})
    return rows


def _messages(value: Any, source: str, where: str) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise _row_error(source, where, "must be a non-empty list of {role, content}")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or set(m) - {"role", "content", "name"}:
            raise _row_error(source, f"{where}[{i}]", "expected {role, content}")
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise _row_error(source, f"{where}[{i}].role", f"expected one of {', '.join(ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise _row_error(source, f"{where}[{i}].content", "must be text (content parts are not supported)")
        _real_text(content, source, f"{where}[{i}].content")
        out.append({"role": role, "content": content})
    if not any(m["content"].strip() for m in out):
        raise _row_error(source, where, "every message is empty")
    return out


def _sharegpt_rows(path: Path, source: str, text: str, cap: int) -> list[dict[str, Any]]:
    try:
        data = json.loads(text, object_pairs_hook=no_repeated_keys)
    except json.JSONDecodeError as exc:
        raise _row_error(source, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except RepeatedKey as exc:  # (a ValueError: before the catch-all below; json gives no position)
        raise _row_error(source, str(exc), RepeatedKey.FIX) from None
    except (ValueError, RecursionError) as exc:  # a number past Python's digit cap; deep nesting
        raise _row_error(source, "", f"not a file Python will read ({type(exc).__name__})") from None
    if not isinstance(data, list):
        raise _row_error(source, "", "expected a JSON list of conversations (the ShareGPT layout)")
    rows = []
    for i, conv in enumerate(data):
        where = f"[{i}]"
        if not isinstance(conv, dict) or not isinstance(conv.get("conversations"), list):
            raise _row_error(source, where, "expected {id, conversations: [{from, value}, ...]}")
        turns = conv["conversations"]
        for j, t in enumerate(turns):
            if not isinstance(t, dict) or not isinstance(t.get("from"), str) or not isinstance(t.get("value"), str):
                raise _row_error(source, f"{where}.conversations[{j}]", "expected {from, value} with text values")
        # SGLang 0.5.23 benchmark/datasets/sharegpt.py sample_sharegpt_requests: conversations
        # with fewer than two turns are dropped, turns[0] is the prompt and turns[1] the completion
        # (roles are not read), and "prompt_len < 2 or output_len < 2" prunes the rest. A blank
        # prompt is dropped too: it is no request (the suite's schema refuses empty text).
        if len(turns) < 2:
            continue
        prompt, reply = turns[0]["value"], turns[1]["value"]
        if not prompt.strip() or estimate_tokens(prompt) < 2 or estimate_tokens(reply) < 2:
            continue
        if conv.get("category") is not None and not isinstance(conv["category"], str):
            raise _row_error(source, f"{where}.category", "must be text")
        _real_text(prompt, source, f"{where}.conversations[0].value")
        rows.append({"line": i, "text": prompt, "messages": None,
                     "max_tokens": min(cap, estimate_tokens(reply)), "category": conv.get("category"),
                     "id": conv.get("id")})
    return rows


def _looks_like_other_layout(text: str, layout: str) -> bool:
    """Whether a file read as ``layout`` (from its suffix) starts as the other layout does: a JSON
    list for ``jsonl`` (a ShareGPT dump saved as ``.jsonl``), an object for ``sharegpt`` (JSON lines
    saved as ``.json``). Only then does a parse error say to set ``format``: a JSONL file whose
    first lines are objects, broken on a later line, is JSONL with a bad line."""
    start = text.lstrip()[:1]
    if layout == "jsonl":
        return start == "["
    return start == "{"


def _order_key(seed: int, position: int) -> bytes:
    return hashlib.sha256(f"{seed}:{position}".encode()).digest()


def draw(spec: DatasetSpec, base_dir: Path, source: str, where: str = "dataset") -> tuple[list[dict], str, int]:
    """The requests of a dataset as prompt mappings (``name``, ``text``, ``messages``, ``max_tokens``,
    ``category``), its SHA-256 and how many rows the file held. Raises :class:`ConfigError` naming
    the dataset file and the line (or the suite and key) on any problem."""
    path = Path(spec.path) if Path(spec.path).is_absolute() else base_dir / spec.path
    if not path.exists():
        raise ConfigError(source, f"{where}.path", f"{path} not found (a relative path is read from {base_dir}: "
                                                   "the suite file's folder, or the study file's for an inline suite)")
    try:
        raw = read_bytes_capped(path, MAX_DATASET_BYTES)
    except ConfigError as exc:
        raise ConfigError(source, f"{where}.path", f"{path}: {exc.message}") from None
    digest = hashlib.sha256(raw).hexdigest()
    if spec.sha256 is not None and spec.sha256 != digest:
        raise ConfigError(source, f"{where}.sha256", f"{path} has SHA-256 {digest}, not the one the suite "
                                                     "pins; the file changed")
    text = decode_utf8(raw, path).removeprefix("\ufeff")  # a byte-order mark some editors write
    layout = spec.layout()
    try:
        rows = (_jsonl_rows(path, str(path), text) if layout == "jsonl"
                else _sharegpt_rows(path, str(path), text, spec.max_output_tokens))
    except ConfigError as exc:
        if spec.format is not None or not ("not valid JSON" in exc.message or "expected a JSON" in exc.message):
            raise
        if not _looks_like_other_layout(text, layout):
            raise  # one bad line (or a broken list) in a file of its suffix's layout: no hint to change it
        other, shape = (("jsonl", "one JSON object per line") if layout == "sharegpt"
                        else ("sharegpt", "one JSON list of conversations"))
        raise ConfigError(exc.source, exc.key, f"{exc.message}; read as {layout} from the file's suffix: "
                                               f"set format: {other} if it is {shape}") from None
    total = len(rows)
    if not total:
        what = ("no row" if layout == "jsonl"
                else "no conversation with a prompt and a reply of 2 tokens or more, its first two turns")
        raise ConfigError(source, where, f"{path} holds no request ({what}); give a file with some")
    kept = []
    for position, row in enumerate(rows):
        chars = len(row["text"])
        out_len = min(row["max_tokens"] or spec.default_max_tokens, spec.max_output_tokens)
        if chars < spec.min_prompt_chars or (spec.max_prompt_chars is not None and chars > spec.max_prompt_chars):
            continue
        if out_len < spec.min_output_tokens:
            continue
        kept.append((position, {**row, "max_tokens": out_len}))
    if not kept:
        raise ConfigError(source, where, f"no request of {path} ({total} rows, layout {layout}) passes the "
                                         "length filters; widen min/max_prompt_chars or min_output_tokens")
    if spec.n is not None:
        if spec.n > len(kept):
            raise ConfigError(source, f"{where}.n", f"{spec.n} requests asked for, but only {len(kept)} of "
                                                    f"{path}'s {total} rows pass the filters; lower n")
        # In the drawn order, so the first few (``single.prompts``) are a random sample too.
        kept = sorted(kept, key=lambda pr: _order_key(spec.seed, pr[0]))[:spec.n]
    prompts = []
    ids = [row.get("id") for _, row in kept]
    use_ids = all(isinstance(i, (str, int)) and str(i).strip() for i in ids) and len(set(map(str, ids))) == len(ids)
    for (position, row), rid in zip(kept, ids):
        label = f"line{row['line']}" if layout == "jsonl" else f"#{row['line']}"
        name = str(rid) if use_ids else label
        prompts.append({"name": name, "text": row["text"], "messages": row["messages"],
                        "max_tokens": row["max_tokens"], "category": row["category"]})
    return prompts, digest, total
