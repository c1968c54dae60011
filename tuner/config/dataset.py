"""Workload datasets: the ``dataset:`` key of a suite file, and the two file layouts it reads.

Why the file formats are parsed here, in the config layer, and not in :mod:`tuner.bench`: a suite
is validated once, when the study file is loaded (every line of the dataset checked before anything
is written), and the config layer may not import the benchmark layer above it. The benchmark layer
receives a loaded :class:`tuner.config.suite.Suite` whose prompts already carry every drawn request,
and computes the workload's statistics from it (:mod:`tuner.bench.workload`).

Layouts:

* ``jsonl``: one JSON object per line, ``{"prompt": TEXT}`` or ``{"messages": [{"role": ..,
  "content": .., "name": ..}, ...]}`` (OpenAI chat: sent as they are, a last assistant turn and each
  turn's ``name`` too, as SGLang 0.5.23's ``benchmark/datasets/openai_dataset.py`` sends them), with
  optional ``max_tokens`` (the request's output length), ``category`` (or ``name``: a label counted
  in the workload statistics) and ``id``. Blank lines and lines starting with ``#`` are skipped.
* ``sharegpt``: a JSON list of ``{"id": .., "conversations": [{"from": "human"|"gpt", "value": ..},
  ...]}``, as ShareGPT dumps (and SGLang's ``bench_serving --dataset-name sharegpt``) have it. The
  pairing is SGLang 0.5.23's (``benchmark/datasets/sharegpt.py`` ``sample_sharegpt_requests``): the
  first turn is the prompt and the second the reply, whatever their roles; a conversation with fewer
  than two turns, or whose prompt or reply is under 2 tokens, is dropped. Tokens are estimated
  (:func:`estimate_tokens`: the tuner has no tokenizer): a CJK character or an emoji one, other
  text four characters one; the reply's length is the request's output length, capped at ``max_output_tokens``.
* ``custom``: SGLang 0.5.23's ``bench_serving --dataset-name custom`` layout
  (``benchmark/datasets/custom.py`` ``sample_custom_requests``): JSON lines, each ``{"conversations"
  (or "conversation"): [turn, turn, ...]}`` whose turns give their text as ``content`` or ``value``;
  paired, filtered and measured as ``sharegpt`` is (first turn the prompt, second the reply). Only
  explicitly (``format: custom``): a ``.jsonl`` file is read as ``jsonl``. Unlike SGLang, a line that
  is not JSON is refused by its number, not skipped: a file SGLang reads short is a wrong workload.

Sampling is deterministic: the requests that pass the length filters are ordered by a SHA-256 of
``(seed, position)`` and the first ``n`` kept, in that order (without ``n``: all, in file order), so the same file, ``n`` and ``seed``
give the same requests on every machine and Python version. The file's SHA-256 is recorded: a
study created again after the file changed is refused as a different suite. So are the rows left
out (``DatasetSpec.dropped_short``, ``dropped_by_filters``): the workload line names them.

Why one module of over 400 lines: it is one reader, from the file's bytes to the drawn requests,
and most of its lines are the refusals of files users bring (compressed exports, other encodings,
ShareGPT as JSON lines, logged OpenAI requests, tool calls, image parts); they share the row and
line numbering, and the draw needs every row checked first, so a split would pass the same state
across modules. The fixes' words, the ``jq`` lines for other tools' layouts, need none of that state:
they are :mod:`tuner.config.dataset_fixes`.
"""

from __future__ import annotations

import codecs
import errno
import glob
import hashlib
import heapq
import itertools
import json
import os
import re
import shlex
import unicodedata
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from .dataset_fixes import (MEDIA_KEYS, OPENAI_FIELDS, OTHER_LAYOUT_KEYS, REPLY_KEYS, SDK_TURN_FIX, TEXT_COLUMNS,
                            media_fix, nul_bytes_fix, one_line_copy, openai_turn_fix, pretty_printed_fix, request_row_fix,
                            unknown_row_key)
from .names import name_problem, shown
from .paths import NonEmptyPathText
from .wording import counted
from .yamlfile import (MAX_DATASET_BYTES, ConfigError, RepeatedKey, StrictModel, _size_text, check_regular_file,
                       grew_past, lone_surrogate, no_repeated_keys, not_utf8, surrogate_message)

#: Characters per token assumed where a length must be estimated without a tokenizer (the same
#: rule of thumb the simulator uses for prompts), for text outside the wide scripts below.
CHARS_PER_TOKEN = 4
#: Characters of the wide East Asian scripts (CJK ideographs and their extensions, kana, Hangul,
#: CJK punctuation, fullwidth forms): about one token each in the tokenizers SGLang serves (Qwen's,
#: Llama 3's, Kimi's tiktoken: 0.6 to 1.5), where four of them per token undercounts a Chinese
#: reply, and so its request's output length, four times over. Emoji and the other characters past
#: U+FFFF (four UTF-8 bytes, which byte-level BPE vocabularies give one to four tokens), and the
#: symbols and dingbats U+2600-U+27BF (three bytes: one or two), count one token each too (QA: a
#: ShareGPT reply of 44 emoji was a request of 11 output tokens).
_WIDE = re.compile("[\u1100-\u115f\u2600-\u27bf\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff"
                   "\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
                   "\U00010000-\U0010ffff]")
#: Roles an OpenAI chat message may have.
ROLES = ("system", "user", "assistant", "tool", "developer")


class TextPart(StrictModel):
    """One text part of a message's content, as OpenAI's API has them (``{"type": "text", "text":
    ..}``); other kinds of part (images, audio) are refused where a dataset is read."""

    type: Literal["text"]
    text: str


class ChatMessage(StrictModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    #: text, or text parts: ``bench.api: chat`` sends them as given (SGLang's template decides how
    #: they join), the raw-text APIs as :func:`content_text`
    content: str | list[TextPart] = Field(union_mode="left_to_right")
    #: the participant's name (OpenAI's ``name``; SGLang 0.5.23's ``ChatCompletionMessageGenericParam``
    #: takes it and hands it to the chat template): ``bench.api: chat`` sends it; the raw-text APIs
    #: send contents only
    name: str | None = None
    #: an assistant turn's reasoning, as a reasoning model's answer gave it beside its content (SGLang
    #: 0.5.23's ``ChatCompletionMessageGenericParam.reasoning_content``, which the chat template reads:
    #: Kimi K2's renders a past turn's thinking): ``bench.api: chat`` sends it; the raw-text APIs send
    #: contents only
    reasoning_content: str | None = None

    @model_validator(mode="after")
    def _reasoning_of_the_model(self):
        if self.reasoning_content is not None and self.role != "assistant":
            raise ValueError(REASONING_NOT_ASSISTANT.format(role=self.role))
        return self

    @model_serializer(mode="wrap")
    def _name_when_given(self, handler):
        # a turn without a name (or reasoning) is stored and sent as before the keys existed: {role, content}
        out = handler(self)
        for key in ("name", "reasoning_content"):
            if isinstance(out, dict) and out.get(key) is None:
                out.pop(key, None)
        return out


#: Why a turn of another role than ``assistant`` cannot carry ``reasoning_content``, and the fix.
REASONING_NOT_ASSISTANT = ("only an assistant turn carries the model's reasoning, this turn's role is {role!r}: "
                           "drop reasoning_content, or give the reasoning's turn as role assistant")


class DatasetSpec(StrictModel):
    """``dataset:`` in a suite: which file, which layout, how many requests and which ones."""

    path: NonEmptyPathText  #: relative to the suite file (an inline suite: the study file)
    #: the layout; default from the suffix: ``.jsonl`` -> jsonl, ``.json`` -> sharegpt; ``custom``
    #: (SGLang's ``--dataset-name custom``: JSON lines of conversations) only when given
    format: Literal["jsonl", "sharegpt", "custom"] | None = None
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

    @field_validator("format", mode="before")
    @classmethod
    def _format_named(cls, v: Any) -> Any:
        # QA qa188: `format: ShareGPT` (the dataset's own spelling), `format: json` for a .json file, SGLang's
        # `--dataset-name openai` were each "input should be 'jsonl', 'sharegpt' or 'custom'", the value given
        # and the one meant left out
        if v is None or v in _FORMATS:
            return v
        said = f"expected one of {', '.join(_FORMATS)}, got {shown(repr(v))[:80]}"
        low = v.strip().lower() if isinstance(v, str) else None
        if low in _FORMATS:
            raise ValueError(f"{said}; formats are lower case: write it as {low}")
        if low in _FORMAT_MEANT:
            raise ValueError(f"{said}; {_FORMAT_MEANT[low]}")
        raise ValueError(said)

    @field_validator("n", mode="before")
    @classmethod
    def _a_count(cls, v: Any) -> Any:
        # every row is what n left out draws: "all", and -1 or 0 as other tools write "no limit" (Hugging Face's
        # split slicing, pandas' nrows=None), were "input should be a valid integer" or "greater than or equal
        # to 1", the way to every row left out (QA qa207)
        if (isinstance(v, str) and v.strip().lower() in ("all", "*", "none", "every")) or (
                isinstance(v, int) and not isinstance(v, bool) and v <= 0):
            raise ValueError(f"{v!r} is no count of requests; leave n out to draw every row (in the file's order), "
                             "or give how many to draw (1 or more)")
        return v

    @field_validator("sha256", mode="before")
    @classmethod
    def _hex_digest(cls, v: Any) -> Any:
        # Hex digits are one number in either case: PowerShell's Get-FileHash and certutil print them
        # upper case (QA: refused, "string should match pattern '^[0-9a-f]{64}$'"); sha256sum prints
        # them lower case, as the tuner stores them
        if isinstance(v, str) and re.fullmatch(r"[0-9A-Fa-f]{64}", v):
            return v.lower()
        if isinstance(v, str):
            raise ValueError(f"expected the file's SHA-256 as 64 hexadecimal digits, as sha256sum FILE prints it "
                             f"(or Get-FileHash FILE); got {v[:80]!r}" + (f" ({len(v)} characters)"
                                                                           if len(v) != 64 else ""))
        return v
    #: rows of the file left out of the draw, recorded at load (a workload cut short without a count
    #: in the output is a silent change; QA: the shipped sharegpt-mini drew 12 of its 13 entries and
    #: nothing said so): ``dropped_short``, conversations SGLang's reader drops (fewer than two
    #: turns, a prompt or reply under 2 tokens); ``dropped_by_filters``, rows the length filters
    #: above leave out. Stored only when not 0, so a suite that drops nothing is stored as before.
    dropped_short: int = Field(0, ge=0)
    dropped_by_filters: int = Field(0, ge=0)

    @model_serializer(mode="wrap")
    def _counts_when_some(self, handler):
        out = handler(self)
        if isinstance(out, dict):
            for key in DROP_COUNTS:
                if not out.get(key):
                    out.pop(key, None)
        return out

    @model_validator(mode="before")
    @classmethod
    def _the_file_as_path(cls, data: Any) -> Any:
        # QA: `dataset: data.jsonl`, the file alone, was "input should be a valid dictionary, got
        # 'data.jsonl'"; `dataset: {file: data.jsonl}` "dataset.path: required key is missing"
        if isinstance(data, str):
            raise ValueError(f"expected a mapping with the file as its path: write it as dataset: {{path: {data}}}")
        if isinstance(data, dict) and "path" not in data:
            if "name" in data or "dataset_name" in data:  # SGLang's bench_serving --dataset-name sharegpt
                key = "name" if "name" in data else "dataset_name"
                raise ValueError(f"{key}: unknown key; the tuner draws from a file, not a named set (SGLang's "
                                 "--dataset-name): give the file as path and its layout as format "
                                 "(jsonl, sharegpt or custom)")
            other = next((k for k in _PATH_KEYS if k in data), None)
            if other is not None:
                value = data[other] if isinstance(data[other], str) else "FILE"
                raise ValueError(f"{other}: unknown key; the file is the dataset's path: write it as path: {value}")
        return data

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


#: The layouts ``format`` names (:class:`DatasetSpec`).
_FORMATS = ("jsonl", "sharegpt", "custom")
#: A ``format`` written as another tool names a layout, and the fix.
_FORMAT_MEANT = {
    "json": "for a .json file, sharegpt reads a JSON list of conversations, and jsonl one JSON object per line",
    "openai": "SGLang's --dataset-name openai rows ({messages, max_tokens}) are the jsonl layout's: write it as jsonl",
    "ndjson": "JSON lines are the jsonl layout: write it as jsonl",
    "jsonlines": "JSON lines are the jsonl layout: write it as jsonl",
    "json_lines": "JSON lines are the jsonl layout: write it as jsonl",
    "share_gpt": "write it as sharegpt",
    "share-gpt": "write it as sharegpt",
}

#: Keys other tools name a dataset's file with (SGLang's ``--dataset-path``, Hugging Face's
#: ``data_files``), written where :class:`DatasetSpec` takes ``path``.
_PATH_KEYS = ("file", "dataset_path", "data_path", "data_files", "filename")

#: :class:`DatasetSpec`'s counts of the rows left out of the draw.
DROP_COUNTS = ("dropped_short", "dropped_by_filters")


def without_drop_counts(suite: Any) -> Any:
    """A stored suite (a dict) without its dataset's :data:`DROP_COUNTS`, to compare two suites: the
    counts follow from the file (its ``sha256``) and the spec, both compared, and a suite a tuner
    stored before they were counted has none (the shipped sharegpt-mini, which drops one entry, would
    read as another suite). Anything else is returned as it is."""
    dataset = suite.get("dataset") if isinstance(suite, dict) else None
    if not isinstance(dataset, dict):
        return suite
    return {**suite, "dataset": {k: v for k, v in dataset.items() if k not in DROP_COUNTS}}


def estimate_tokens(text: str, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """A length in tokens estimated from characters (no tokenizer): a character of a wide East Asian
    script (:data:`_WIDE`) one token, the rest ``chars_per_token`` characters a token; at least 1.
    (QA: a Chinese ShareGPT reply of 400 characters, some 400 tokens to SGLang's tokenizer, was a
    request of 100 output tokens.) The simulator counts its prompts with it too, at its profile's
    ``chars_per_token`` (:meth:`tuner.sim.model.PerfModel.prompt_tokens`)."""
    if text.isascii():
        return max(1, round(len(text) / chars_per_token))
    wide = _WIDE.subn("", text)[1]  # a count, without a list of every match
    return max(1, wide + round((len(text) - wide) / chars_per_token))


def content_text(content: str | list) -> str:
    """A message's content as one text: text parts joined by a space, as SGLang 0.5.23 flattens
    them for a chat template that takes text (``srt/parser/jinja_template_utils.py``
    ``process_content_for_template_format``, the "string" format: ``" ".join(text_parts)``)."""
    if isinstance(content, str):
        return content
    return " ".join(p["text"] if isinstance(p, dict) else p.text for p in content)


def messages_text(messages: list[dict]) -> str:
    """The text of a chat request sent as raw text (``/generate``, ``/v1/completions``): the turns'
    contents, one paragraph each, with no chat template (applying the model's template is what
    ``bench.api: chat`` is for)."""
    return "\n\n".join(content_text(m["content"]) for m in messages)


def _row_error(source: str, where: str, message: str) -> ConfigError:
    return ConfigError(source, where, message)


def _real_text(text: str, source: str, where: str) -> None:
    """Refuse a lone UTF-16 surrogate (a JSON ``"\\ud800"`` escape without its pair): Python holds
    it, but it cannot be encoded, so every request sending it would fail with an HTTP 500."""
    bad = lone_surrogate(text)
    if bad is not None:
        raise _row_error(source, where, surrogate_message(text, bad))


def _real_labels(row: dict, source: str, where: str) -> None:
    """Refuse a lone surrogate in a row's text labels too (``category``, ``name``, ``id``): they are
    stored with the study as the workload's categories and the prompts' names (QA: accepted, then
    `tuner study status` and `report` ended in UnicodeEncodeError's traceback)."""
    for key in ("category", "name", "id"):
        if isinstance(row.get(key), str):
            _real_text(row[key], source, f"{where}{key}")
            # printed into status and report lines: a newline splits them, an ESC drives the terminal
            problem = name_problem(row[key], whole=True)
            if problem:
                raise _row_error(source, f"{where}{key}", f"{row[key]!r} {problem}")


def _json_lines(source: str, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str, Any]]:
    """``(number, "line N", value)`` of each JSON line (``jsonl`` and ``custom``), one at a time: a file
    is never held whole. Blank lines and lines starting with ``#`` are skipped; a line that is not
    JSON is refused by its number."""
    for lineno, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"line {lineno}"
        try:
            obj = json.loads(stripped, object_pairs_hook=no_repeated_keys)
        except json.JSONDecodeError as exc:
            raw = (_raw_control(exc, column_offset=len(line) - len(line.lstrip()))
                   or _python_literal(exc, column_offset=len(line) - len(line.lstrip())))
            if raw is not None:  # (a stray NUL inside a string too: UTF-16 text breaks before one)
                raise _row_error(source, where, f"not valid JSON ({raw})") from None
            # NUL bytes are UTF-8, but no JSON text holds one raw: UTF-16 text without its mark, whose NULs
            # sit between its characters; a line of NULs alone is a file's unwritten end (nul_bytes_fix)
            hint = "; it holds NUL bytes: UTF-16 text? save the file as UTF-8" if "\x00" in stripped else ""
            if hint and not stripped.replace("\x00", "").strip():
                hint = nul_bytes_fix(source, stripped.count("\x00"), "the line holds")
            elif hint and exc.msg == "Extra data" and not (rest := stripped[exc.pos:]).replace("\x00", "").strip():
                hint = nul_bytes_fix(source, rest.count("\x00"), "after its row, the line holds")
            if not hint and "\r" in stripped and exc.msg == "Extra data":  # rows split by a CR alone
                hint = "; its lines end in CR alone (a classic Mac file): save it with LF line ends"
            if not hint and exc.msg == "Extra data" and stripped[exc.pos:].strip() == ",":
                # QA: a JSON list's rows pasted one a line, each with its comma
                hint = "; it ends in a comma: JSON lines hold one object each, nothing between them"
            if not hint and stripped == "{":
                # QA: rows pretty-printed (`jq '.[]'` without -c, json.dumps(row, indent=2)), an object's
                # "{" alone on its line, were "line 1: not valid JSON (Expecting property name ...)";
                # `jq -c .` reads such a stream of objects and writes each on one line
                hint = pretty_printed_fix(source)
            raise _row_error(source, where, f"not valid JSON ({exc.msg}){hint}") from None
        except RepeatedKey as exc:  # (a ValueError: before the catch-all below)
            raise _row_error(source, f"{where}: {exc}", RepeatedKey.FIX) from None
        except (ValueError, RecursionError) as exc:  # a number past Python's digit cap; deep nesting
            raise _row_error(source, where, f"not a request Python will read ({type(exc).__name__})") from None
        yield lineno, where, obj


def _raw_control(exc: json.JSONDecodeError, column_offset: int = 0) -> str | None:
    """What a JSON error at a control character written raw inside a string says (a tab, a NUL, ...:
    JSON escapes every character below U+0020, and Python's reader, as SGLang's bench_serving uses it,
    refuses one raw), naming it, its column (``column_offset``: blanks before the parsed text on its
    line) and the escape JSON writes, or None for another error.
    (QA: a row holding a raw tab, as a hand-made or tab-separated export has one, was "not valid JSON
    (Invalid control character at)", the character, its column and the fix left out.)"""
    if exc.msg != "Invalid control character at" or exc.pos >= len(exc.doc):
        return None
    char = exc.doc[exc.pos]
    escaped = json.dumps(char)[1:-1]  # "\t", "\u0000": as a JSON writer writes it
    column = exc.colno + (column_offset if exc.lineno == 1 else 0)  # (the line is the error's key)
    return (f"a raw control character {shown(char)} in a string, column {column}: JSON text writes it escaped, "
            f"as {escaped}; write the rows with a JSON writer (Python's json.dumps does)")


#: What a Python value written where JSON has its own (``str(row)``, ``print(row)``) starts with.
_PYTHON_LITERAL = re.compile(r"(None|True|False)\b|'")
_JSON_FOR = {"None": "null", "True": "true", "False": "false", "'": '"'}


def _python_literal(exc: json.JSONDecodeError, column_offset: int = 0) -> str | None:
    """What a JSON error at a Python literal says (``None``, ``True``, ``False``, a ``'`` quote: a row
    written with ``str(row)`` or ``print(row)`` rather than ``json.dumps``), naming it, its column and
    JSON's spelling, or None for another error. (QA: ``{'prompt': 'hi'}`` was "not valid JSON
    (Expecting property name enclosed in double quotes)", ``"max_tokens": None`` "(Expecting
    value)", without where or why.)"""
    found = _PYTHON_LITERAL.match(exc.doc, exc.pos)
    if found is None:
        return None
    literal = found.group(0)
    column = exc.colno + (column_offset if exc.lineno == 1 else 0)
    what = "a ' quote" if literal == "'" else literal
    return (f"{exc.msg}: {what} at column {column} is Python's, JSON writes {_JSON_FOR[literal]}; the rows look "
            "written with str() or print(): write each with json.dumps")


def _jsonl_rows(source: str, lines: Iterable[tuple[int, str]]) -> Iterator[dict[str, Any]]:
    """The requests of JSONL ``lines`` (number, text), one at a time."""
    for lineno, where, obj in _json_lines(source, lines):
        if not isinstance(obj, dict):
            # QA: a line holding a list of rows, or a bare text, was refused without the fix
            got = ("; got a JSON list: give one request object a line" if isinstance(obj, list)
                   else '; got a text: write it as {"prompt": TEXT}' if isinstance(obj, str) else "")
            raise _row_error(source, where, f"expected a JSON object with prompt or messages{got}")
        # the key that tells what the file is first (a ShareGPT row's "conversations" beside its "lang")
        unknown = sorted(set(obj) - {"prompt", "messages", "max_tokens", "category", "name", "id"},
                         key=lambda k: (k not in ("conversations", "conversation"),
                                        k not in ("instruction", "input"), k not in OTHER_LAYOUT_KEYS,
                                        k not in REPLY_KEYS, k not in OPENAI_FIELDS, k))
        if unknown:
            raise _row_error(source, f"{where}: {unknown[0]}", unknown_row_key(unknown[0], source, obj))
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
        max_tokens = given = obj.get("max_tokens")
        if isinstance(given, float) and given.is_integer():
            # JSON has one kind of number: pandas writes an integer column with a gap as floats (256.0,
            # and null for the gap), as the conversion the CSV and Parquet refusals suggest does, and
            # SGLang 0.5.23's reader sends the row's max_tokens as it is (openai_dataset.py), which its
            # max_completion_tokens (an int, protocol.py) takes as 256 (QA: refused, "got 256.0")
            max_tokens = int(given)
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                       or max_tokens < 1):
            raise _row_error(source, f"{where}: max_tokens", f"must be a positive integer, got {given!r}")
        category = obj.get("category", obj.get("name"))
        if category is not None and not isinstance(category, str):
            raise _row_error(source, f"{where}: category", "must be text")
        _real_labels(obj, source, f"{where}: ")
        yield {"line": lineno, "text": prompt, "messages": messages, "max_tokens": max_tokens,
               "category": category or None, "id": obj.get("id")}


#: Keys of an OpenAI chat turn that carry tool calls (and the older ``function_call``).
_TOOL_KEYS = ("tool_calls", "tool_call_id", "function_call")


#: Keys of an OpenAI chat message that carry nothing when null or an empty list, as OpenAI's SDK writes
#: every field of a message it returns: read as absent.
_EMPTY_WHEN_NULL = _TOOL_KEYS + ("refusal", "audio", "annotations")


def _messages(value: Any, source: str, where: str) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise _row_error(source, where, "must be a non-empty list of {role, content}")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise _row_error(source, f"{where}[{i}]", "expected {role, content}")
        # keys of a message as OpenAI's SDK gives it back (message.model_dump()) that hold nothing: no call,
        # no refusal, no audio (QA: such a logged assistant turn, "tool_calls": null, was refused as a
        # tool call)
        empty = {k for k in _EMPTY_WHEN_NULL if k in m and (m[k] is None or m[k] == [])}
        extra = sorted(set(m) - empty - {"role", "content", "name", "reasoning_content"},
                       key=lambda k: (k not in _TOOL_KEYS, k))
        if extra and extra[0] in _TOOL_KEYS:
            # QA: an agent's log ("tool_calls" with "content": null, then a "tool" turn with its
            # "tool_call_id") was "messages[1]: expected {role, content}", naming no key. Sending
            # tool calls needs the request's tool definitions too, which a row does not carry.
            raise _row_error(source, f"{where}[{i}].{extra[0]}", "tool calls are not supported: the tuner sends "
                                                                 "each turn's role and text content; write the "
                                                                 "call into the turn's content, or drop the row")
        if extra and extra[0] in ("refusal", "annotations"):
            # OpenAI's SDK logs a reply the model refused with its text in "refusal" (content null), and a
            # reply citing the web with its "annotations" (url_citation spans of its content): the turn's
            # text is its content, else its refusal, which Chat Completions takes back as content (QA
            # qa152: "unknown key", no fix)
            raise _row_error(source, f"{where}[{i}].{extra[0]}", SDK_TURN_FIX.format(
                command=f"{shlex.quote(source)} > {shlex.quote(one_line_copy(source))}"))
        if extra:
            raise _row_error(source, f"{where}[{i}].{extra[0]}", "unknown key; a turn is {role, content} "
                                                                 "(and optionally name, and an assistant turn's "
                                                                 "reasoning_content)")
        role, content, name = m.get("role"), m.get("content"), m.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise _row_error(source, f"{where}[{i}].name", f"must be non-empty text, got {name!r}")
        if role not in ROLES:
            raise _row_error(source, f"{where}[{i}].role",
                             f"expected one of {', '.join(ROLES)}, got {role!r}{_role_fix(role)}")
        if isinstance(content, list):
            content = _text_parts(content, source, f"{where}[{i}].content")
        elif isinstance(content, str):
            _real_text(content, source, f"{where}[{i}].content")
        else:
            raise _row_error(source, f"{where}[{i}].content", "must be text, or a list of text parts "
                                                             '({"type": "text", "text": ...})')
        turn = {"role": role, "content": content}
        if name is not None:  # kept, as SGLang's bench_serving (--dataset-name openai) sends a row's turns
            _real_text(name, source, f"{where}[{i}].name")
            turn["name"] = name
        reasoning = m.get("reasoning_content")
        if reasoning is not None:  # null: none, as OpenAI-style logs write a turn without reasoning
            # a reasoning model's logged turn (QA: refused as an unknown key, where SGLang's bench_serving
            # --dataset-name openai sends the turns as they are and Kimi K2's template renders the thinking)
            if role != "assistant":
                raise _row_error(source, f"{where}[{i}].reasoning_content", REASONING_NOT_ASSISTANT.format(role=role))
            if not isinstance(reasoning, str):
                raise _row_error(source, f"{where}[{i}].reasoning_content",
                                 f"must be text (the model's reasoning in that turn), got {reasoning!r}"[:300])
            _real_text(reasoning, source, f"{where}[{i}].reasoning_content")
            turn["reasoning_content"] = reasoning
        out.append(turn)
    if not any(content_text(m["content"]).strip() for m in out):
        raise _row_error(source, where, "every message is empty")
    asked = instructions_only(out)
    if asked is not None:
        raise _row_error(source, where, asked + "; give the user turn's text, or drop the row")
    return out


#: Roles whose turns instruct the model (OpenAI's system and developer messages); the other roles'
#: turns are the conversation it answers.
INSTRUCTION_ROLES = ("system", "developer")


def instructions_only(turns: list[dict]) -> str | None:
    """What is wrong with a conversation whose only text is in its instructions (system or developer
    turns): every turn it answers (user, assistant, tool) empty or whitespace, so it asks the model
    nothing, as a blank prompt does (refused beside it); None for one that asks something. QA: a row
    ``[{system: "x"}, {user: "  "}]`` was accepted and sent, a user's question lost in the log (an
    image-only turn stripped, say) measured as a request. Many models' chat templates refuse a
    conversation without a user turn, too."""
    if any(content_text(m["content"]).strip() for m in turns if m["role"] not in INSTRUCTION_ROLES):
        return None
    roles = " and ".join(sorted({m["role"] for m in turns if m["role"] in INSTRUCTION_ROLES}))
    blank = next((i for i, m in enumerate(turns) if m["role"] not in INSTRUCTION_ROLES), None)
    said = (f"messages[{blank}], the {turns[blank]['role']} turn, is blank" if blank is not None
            else "no user turn")
    return f"only its instructions ({roles} turns) have text, {said}: it asks the model nothing"


#: Roles of other chat layouts, and the OpenAI role a turn of theirs is written with.
_OTHER_ROLES = {"human": ("user", "ShareGPT's name for"), "gpt": ("assistant", "ShareGPT's name for"),
                "function": ("tool", "OpenAI's retired role for a function's result, now"),
                # QA: a Gemini API log (roles user and model) was refused with the list of roles alone
                "model": ("assistant", "Gemini's name for")}


def _role_fix(role: Any) -> str:
    """The fix for a turn's unknown ``role`` when it tells which role was meant (QA: ``"Human"`` and
    ``"gpt"`` in a file converted from ShareGPT, ``"USER"``, were refused with the list of roles
    alone). SGLang 0.5.23 (``srt/entrypoints/openai/protocol.py``) lowers the case of every role but
    ``user`` and takes ``function``; the tuner sends the OpenAI roles as written, so the fix is the
    role in its lower-case OpenAI form."""
    if not isinstance(role, str):
        return ""
    low = role.strip().lower()
    if low in _OTHER_ROLES:
        openai, what = _OTHER_ROLES[low]
        return f" ({what} {openai!r}); write it as {openai!r}"
    if low in ROLES:
        return f"; roles are lower case: write it as {low!r}"
    return ""


#: Content-part types of OpenAI's Responses API that hold text (the Chat Completions name: ``text``).
_RESPONSES_TEXT_PARTS = ("input_text", "output_text")


def _text_parts(parts: list, source: str, where: str) -> list[dict]:
    """A message's content given as OpenAI content parts: text parts are kept as they are (QA: a
    row with ``[{"type": "text", ...}]``, as OpenAI's clients write it, was refused); an image,
    audio or file part is refused naming it: the tuner measures text requests."""
    if not parts:
        raise _row_error(source, where, "is an empty list; give the turn's text")
    out = []
    for j, part in enumerate(parts):
        at = f"{where}[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _RESPONSES_TEXT_PARTS:
            # text by another name: OpenAI's Responses API writes a turn's text as an "input_text" part
            # (the user's) or "output_text" (the model's); Chat Completions, which SGLang serves
            # (srt/entrypoints/openai/protocol.py), reads "text" alone (QA qa152: such a text part was
            # refused as "not supported: the tuner sends text requests")
            raise _row_error(source, f"{at}.type", f"{kind!r} is OpenAI's Responses API name for a text "
                                                   "part, which Chat Completions calls 'text'; write it as 'text'")
        if isinstance(kind, str) and kind != "text":
            raise _row_error(source, f"{at}.type", f"{kind!r} parts are not supported: the tuner sends text "
                                                   "requests; drop the part (or the row)")
        if not isinstance(part, dict) or kind != "text" or set(part) != {"type", "text"} \
                or not isinstance(part["text"], str):
            raise _row_error(source, at, 'expected a text part {"type": "text", "text": ...}')
        _real_text(part["text"], source, f"{at}.text")
        out.append({"type": "text", "text": part["text"]})
    return out


def _sharegpt_rows(source: str, text: str, cap: int) -> list[dict[str, Any] | None]:
    if not text.strip():  # QA: an empty file (or blanks, or a byte-order mark alone) was "line 1: not
        # valid JSON (Expecting value)", where an empty JSONL file says it holds no request
        raise _row_error(source, "", "is empty, no JSON list of conversations; give a file with some")
    try:
        data = json.loads(text, object_pairs_hook=no_repeated_keys)
    except json.JSONDecodeError as exc:
        raw = _raw_control(exc) or _python_literal(exc)
        rest = exc.doc[exc.pos:] if exc.msg == "Extra data" else ""
        hint = (nul_bytes_fix(source, rest.count("\x00"), "after its JSON list, the file holds")
                if "\x00" in rest and not rest.replace("\x00", "").strip() else "")
        raise _row_error(source, f"line {exc.lineno}", f"not valid JSON ({raw or exc.msg}){hint}") from None
    except RepeatedKey as exc:  # (a ValueError: before the catch-all below; json gives no position)
        raise _row_error(source, str(exc), RepeatedKey.FIX) from None
    except (ValueError, RecursionError) as exc:  # a number past Python's digit cap; deep nesting
        raise _row_error(source, "", f"not a file Python will read ({type(exc).__name__})") from None
    if not isinstance(data, list):
        raise _row_error(source, "", _wrapped_list(data, source)
                         or "expected a JSON list of conversations (the ShareGPT layout)")
    rows: list[dict[str, Any] | None] = []  # None: an entry SGLang's reader drops (counted by draw)
    for i, conv in enumerate(data):
        row = _conversation_row(conv, source, f"[{i}]", cap, custom=False)
        rows.append(None if row is None else {**row, "line": i})
    return rows


def _wrapped_list(data: Any, source: str) -> str | None:
    """What a ShareGPT file says when it is a JSON object holding its entries as a list under a key
    (``{"data": [...]}``, as a Hugging Face dataset's JSON is read with ``field="data"``; ``{"train": [...],
    "test": [...]}``), with the ``jq`` line that writes that list where the layout wants it: the list itself
    for conversations (the file keeping ``.json``), its entries one a line for request rows; else None.
    (QA qa188: such a file was told to ``set format: jsonl if it is one JSON object per line``, and so read
    was refused as ``data: unknown key``: a fix that fixed nothing.)"""
    if not isinstance(data, dict) or "conversations" in data or "conversation" in data:
        return None
    lists = [k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(e, dict) for e in v)]
    if not lists:
        return None
    key, path = lists[0], Path(source)
    index = key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else json.dumps(key)

    def jq(text: str) -> str:  # the filter in single quotes, as the other jq lines write it
        return f"'{text}'" if "'" not in text else shlex.quote(text)

    others = f" (and {', '.join(map(shown, lists[1:]))}: one list a file)" if len(lists) > 1 else ""
    entry = data[key][0]
    if "conversations" in entry or "conversation" in entry:
        out = shlex.quote(str(path.with_name(f"{path.stem}.{re.sub(r'[^A-Za-z0-9_-]', '_', key)}.json")))
        return (f"a JSON object holding its conversations as a list under {shown(key)}{others}, where the layout "
                f"is the list itself (jq {jq('.' + index)} {shlex.quote(source)} > {out} writes it so; give that "
                "file as dataset.path)")
    return (f"a JSON object holding its rows as a list under {shown(key)}{others}, rows that are no "
            f"conversations: JSON lines hold one a line (jq -c {jq('.' + index + '[]')} {shlex.quote(source)} > "
            f"{shlex.quote(one_line_copy(source))} writes them so; give that file as dataset.path)")


def _conversation_row(conv: Any, source: str, where: str, cap: int, *, custom: bool) -> dict[str, Any] | None:
    """The request of one conversation (a ShareGPT list's entry, or a ``custom`` file's line), or
    None when SGLang drops it. ``custom``: a turn's text is its ``content``, else its ``value``
    (SGLang 0.5.23 ``benchmark/datasets/custom.py``: ``convs[0].get("content", convs[0].get("value",
    ""))``); otherwise its ``value`` (``sharegpt.py``: ``[0]["value"]``)."""
    # SGLang 0.5.23 reads "conversation" where "conversations" is absent (sharegpt.py and custom.py:
    # data.get("conversations", data.get("conversation", [])); QA: such a file was refused)
    turns = conv.get("conversations", conv.get("conversation")) if isinstance(conv, dict) else None
    if not isinstance(turns, list):
        raise _row_error(source, where, ("expected {conversations: [{role, content}, ...]}" if custom
                                         else "expected {id, conversations: [{from, value}, ...]}")
                         + request_row_fix(conv, source, custom=custom))
    key = "conversations" if "conversations" in conv else "conversation"
    at = f"{where}: " if custom else f"{where}."  # "line 4: conversations[0]" as jsonl's; "[3].category"
    # SGLang 0.5.23 benchmark/datasets/sharegpt.py sample_sharegpt_requests (and custom.py alike):
    # conversations with fewer than two turns are dropped, turns[0] is the prompt and turns[1] the
    # completion (roles are not read), and "prompt_len < 2 or output_len < 2" prunes the rest. A
    # blank prompt is dropped too: it is no request (the suite's schema refuses empty text). Only the
    # two turns read are checked (QA: a null "value" in a later turn refused the whole file, which
    # SGLang's benchmark reads; a long export holds such turns).
    if len(turns) < 2:
        return None
    texts = []
    for j, t in enumerate(turns[:2]):
        field = ("content" if isinstance(t, dict) and "content" in t else "value") if custom else "value"
        if not isinstance(t, dict) or not isinstance(t.get(field), str):
            raise _row_error(source, f"{at}{key}[{j}]",
                             "expected {role, content} (or {from, value}) with text" if custom
                             else "expected {from, value} with a text value" + openai_turn_fix(t, source))
        texts.append((field, t[field]))
    (field, prompt), (_, reply) = texts
    if not prompt.strip() or estimate_tokens(prompt) < 2 or estimate_tokens(reply) < 2:
        return None
    # QA (qa207): LLaVA-Instruct's conversations ("image": "coco/...jpg", "<image>\nWhat is shown?") were
    # drawn as text requests, their images left out, where a JSONL row's image part is refused; a null or
    # empty key (a mixed set's text-only rows) is no media
    if (media := next((k for k in MEDIA_KEYS if conv.get(k) not in (None, "", [])), None)) is not None:
        raise _row_error(source, f"{at}{media}", media_fix(media, source, custom=custom))
    if conv.get("category") is not None and not isinstance(conv["category"], str):
        raise _row_error(source, f"{at}category", "must be text")
    _real_labels(conv, source, at)
    _real_text(prompt, source, f"{at}{key}[0].{field}")
    return {"text": prompt, "messages": None, "max_tokens": min(cap, estimate_tokens(reply)),
            "category": conv.get("category"), "id": conv.get("id")}


def _custom_rows(source: str, lines: Iterable[tuple[int, str]], cap: int) -> Iterator[dict[str, Any] | None]:
    """The requests of a ``custom`` file's JSON ``lines`` (number, text), one at a time; None for a
    line SGLang's reader drops (counted by :func:`draw`)."""
    for lineno, where, obj in _json_lines(source, lines):
        row = _conversation_row(obj, source, where, cap, custom=True)
        yield None if row is None else {**row, "line": lineno}


def _looks_like_other_layout(start: str, layout: str) -> bool:
    """Whether a file read as ``layout`` (from its suffix), whose first character that is not blank
    is ``start``, starts as the other layout does: a JSON list for ``jsonl`` (a ShareGPT dump saved
    as ``.jsonl``), an object for ``sharegpt`` (JSON lines saved as ``.json``). Only then does a
    parse error say to set ``format``: a JSONL file whose first lines are objects, broken on a
    later line, is JSONL with a bad line."""
    if layout == "jsonl":
        return start == "["
    return start == "{"


def _first_row_is_conversation(path: Path) -> bool:
    """Whether the first line of ``path`` that is not blank is a JSON object holding ``conversations``
    (or ``conversation``): a ``custom`` file, whatever its suffix. Read a line at a time."""
    try:
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", errors="replace").removeprefix("\ufeff").strip()
                if line:
                    row = json.loads(line)
                    return isinstance(row, dict) and ("conversations" in row or "conversation" in row)
    except (OSError, ValueError, RecursionError):
        return False
    return False


def _order_key(seed: int, position: int) -> bytes:
    return hashlib.sha256(f"{seed}:{position}".encode()).digest()


# Reading a file of up to MAX_DATASET_BYTES (QA: a 300 MB JSONL peaked at 4.2x its size in RSS, its
# bytes, text, lines and every row's prompt held at once; benchmarks/dataset_memory.py measures it).
# A first pass streams the file for its SHA-256, its UTF-8 check and its first character; JSONL is
# then read a line at a time and, with ``n``, only the n rows drawn so far are kept. A ShareGPT file
# is one JSON document: its text is parsed whole (its bytes let go first).
_CHUNK = 1 << 20


def _scan(path: Path) -> tuple[str, ConfigError | None, str]:
    """One pass over the file, holding a chunk at a time: its SHA-256, the error for its first byte
    that is not UTF-8 (None: it is UTF-8 text; :func:`_not_utf8`, from what this pass saw: the file is
    not read again for it) and its first character that is not blank after a byte-order mark ("" when
    there is none)."""
    h = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, bad, start, began = 0, None, "", False
    head, newlines = b"", 0  # the first bytes (what the file is) and the line ends before the bad byte
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                if offset + len(chunk) > MAX_DATASET_BYTES:
                    raise grew_past(path, MAX_DATASET_BYTES)
                head += chunk[:16 - len(head)]  # (16 bytes hold every mark of _NOT_TEXT)
                if bad is None:
                    pending = len(decoder.getstate()[0])
                    try:
                        piece = decoder.decode(chunk)
                    except UnicodeDecodeError as exc:
                        bad, piece = offset - pending + exc.start, ""
                    # bytes a character left pending from the chunk before are no "\n": the lines
                    # before the bad byte are those ended in earlier chunks and in this one before it
                    newlines += chunk.count(b"\n", 0, None if bad is None else max(0, bad - offset))
                    if not start and piece:
                        if not began:
                            piece, began = piece.removeprefix("\ufeff"), True
                        start = piece.lstrip()[:1]
                offset += len(chunk)
            if bad is None:
                try:
                    decoder.decode(b"", final=True)
                except UnicodeDecodeError as exc:
                    bad = offset - len(decoder.getstate()[0]) + exc.start
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror or exc}") from None
    return h.hexdigest(), None if bad is None else _not_utf8(path, bad, newlines + 1, head), start


#: The fix for UTF-16 or UTF-32 text (UTF8: the file it writes, beside the given one, its suffix kept).
_ICONV = ("save it as UTF-8 (iconv -f {encoding} -t UTF-8 FILE > UTF8 writes it so; give that file as "
          "dataset.path)")

#: A file's first bytes that say it is no UTF-8 text at all: a compressed archive (its format and the
#: command that unpacks it) or text in a wider Unicode encoding (its byte-order mark). The longer
#: marks first: UTF-32's little-endian mark starts with UTF-16's.
_NOT_TEXT = (
    (re.escape(b"\x1f\x8b"), "gzip-compressed", "decompress it first (gunzip -k FILE) and give the file it holds as dataset.path"),
    (rb"BZh[1-9]1AY&SY", "bzip2-compressed", "decompress it first (bunzip2 -k FILE) and give the file it holds as dataset.path"),
    (re.escape(b"\xfd7zXZ\x00"), "xz-compressed", "decompress it first (unxz -k FILE) and give the file it holds as dataset.path"),
    (re.escape(b"\x28\xb5\x2f\xfd"), "zstd-compressed", "decompress it first (unzstd FILE) and give the file it holds as dataset.path"),
    (re.escape(b"PK\x03\x04"), "a zip archive", "extract the file from it first (unzip FILE) and give that file as dataset.path"),
    (re.escape(b"PAR1"), "a Parquet file (as Hugging Face datasets ship)", "convert it to JSON lines first "
     "(python -c \"import pandas as p; p.read_parquet('FILE').to_json('FILE.jsonl', orient='records', lines=True, "
     "force_ascii=False)\"), its rows holding prompt or messages, and give that file as dataset.path"),
    (re.escape(b"ARROW1"), "an Arrow file", "convert it to JSON lines first (a prompt or messages object per line) and "
     "give that file as dataset.path"),
    # iconv writes the text it converts to its standard output: "> UTF8" keeps it (QA qa188: the line
    # gave `iconv ... FILE` alone, which printed the file to the terminal and wrote nothing)
    (re.escape(b"\xff\xfe\x00\x00"), "UTF-32 text", _ICONV.format(encoding="UTF-32")),
    (re.escape(b"\x00\x00\xfe\xff"), "UTF-32 text", _ICONV.format(encoding="UTF-32")),
    (re.escape(b"\xff\xfe"), "UTF-16 text", _ICONV.format(encoding="UTF-16")),
    (re.escape(b"\xfe\xff"), "UTF-16 text", _ICONV.format(encoding="UTF-16")),
)

#: The tool that unpacks each compressed kind of :data:`_NOT_TEXT`, and the suffixes from which it
#: names the file it writes (gzip's, bzip2's, xz's and zstd's manuals): a file not so named, a
#: ``d.jsonl`` that holds gzip'd bytes (a download saved under the name it unpacks to), is refused by
#: the tool (``gunzip: d.jsonl: unknown suffix -- ignored``; bunzip2 writes ``d.jsonl.out``), so its
#: command writes the standard output to a file named for the tuner instead (QA qa188: the line's
#: command failed on such a file).
_UNPACKED_FROM = {
    "gzip-compressed": ("gunzip", (".gz", "-gz", ".z", "-z", "_z", ".tgz", ".taz")),
    "bzip2-compressed": ("bunzip2", (".bz2", ".bz", ".tbz2", ".tbz")),
    "xz-compressed": ("unxz", (".xz", ".txz")),
    "zstd-compressed": ("unzstd", (".zst", ".tzst")),
}


#: Suffixes of spreadsheet workbooks, which are zip archives (:data:`_SPREADSHEET`).
_SPREADSHEETS = (".xlsx", ".xlsm", ".ods")
_SPREADSHEET = (
    (re.escape(b"PK\x03\x04"), "a spreadsheet workbook (a zip archive of XML)", "convert its sheet to JSON lines first "
     "(python -c \"import pandas as p; p.read_excel('FILE').to_json('FILE.jsonl', orient='records', lines=True, "
     "force_ascii=False)\", its columns named prompt and max_tokens) and give that file as dataset.path"),
)


def _not_utf8(path: Path, offset: int, line: int, head: bytes) -> ConfigError:
    """The error for a dataset file whose byte ``offset`` (on line ``line``) is the first that is not
    UTF-8: what the file is when its first bytes ``head`` say (:func:`not_text_kind`: a gzip'd export,
    a UTF-16 file a Windows tool wrote), with the command that makes it readable; else the line that
    holds the byte, so one bad row in a file of a million is found (QA: a JSONL file with one Latin-1
    row was named by byte alone)."""
    if (kind := not_text_kind(path, head)) is not None:
        return ConfigError(path, "", kind)
    return not_utf8(path, offset, f"line {line}")


def not_text_kind(path: Path, head: bytes, given_as: str = "dataset.path") -> str | None:
    """What a file that is not UTF-8 text is, when its first 16 bytes ``head`` say (a compressed
    archive, a spreadsheet, Parquet, UTF-16 or UTF-32 text), with the command that makes it readable,
    whose result is to be given as ``given_as`` (a dataset's ``dataset.path``, a prompt's file); None
    when they say nothing (a stray byte: the caller names it)."""
    kinds = _NOT_TEXT
    if path.suffix.lower() in _SPREADSHEETS:
        # a workbook is a zip archive of XML parts: unzipping it gives no rows (QA: an .xlsx of prompts
        # was told to unzip it); pandas reads the sheet (openpyxl for .xlsx, odfpy for .ods)
        kinds = _SPREADSHEET + _NOT_TEXT
    for magic, what, fix in kinds:
        if re.match(magic, head):
            # the file as the line names it, quoted for the shell: the command runs from the folder the
            # user is in (QA, qa134: `gunzip -k requests.jsonl.gz` for data/requests.jsonl.gz failed there)
            shown = str(path)
            tool, suffixes = _UNPACKED_FROM.get(what, ("", ()))
            if tool and not path.name.lower().endswith(suffixes):
                fix = (f"decompress it first ({tool} -c FILE > UNPACKED writes the file it holds; give that file "
                       "as dataset.path)")
            # the files a command writes keep the suffix, which tells the layout (a ShareGPT .json stays one);
            # one pass, so a path holding a placeholder's letters is left as it is
            words = {"'FILE": f"'{shown}",  # inside a Python string (the Parquet line)
                     "FILE": shlex.quote(shown),  # a shell word
                     "UTF8": shlex.quote(str(path.with_name(f"{path.stem}.utf8{path.suffix}"))),
                     "UNPACKED": shlex.quote(str(path.with_name(f"{path.stem}.decompressed{path.suffix}"))),
                     "dataset.path": given_as}
            command = re.sub("'FILE|FILE|UTF8|UNPACKED|dataset\\.path", lambda m: words[m.group(0)], fix)
            return f"{what}, not UTF-8 text; {command}"
    return None


def _changed(path: Path) -> ConfigError:
    return ConfigError(path, "", "changed while being read; load it again when nothing is writing it")


def _jsonl_lines(path: Path, digest: str) -> Iterator[tuple[int, str]]:
    """The file's lines (number, text), read one at a time; :func:`_changed` if its bytes are not
    those :func:`_scan` read. Lines end at "\n" only: str.splitlines() would also split inside a
    JSON string at U+2028, U+2029 or U+0085, which JSON allows raw (a "\r" before the "\n" is
    stripped with the line's blanks)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                h.update(raw)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise _changed(path) from None
                # a byte-order mark starts any line: files joined with `cat`, each saved with its mark
                # (QA: line 2 of two such files was "Unexpected UTF-8 BOM (decode using utf-8-sig)");
                # no JSON text starts with U+FEFF, so no row is read otherwise for it
                yield lineno, line.removeprefix("\ufeff")
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror or exc}") from None
    if h.hexdigest() != digest:
        raise _changed(path)


def _sharegpt_text(path: Path, digest: str) -> str:
    """The whole file as text (a byte-order mark dropped), its bytes let go before it is parsed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror or exc}") from None
    if hashlib.sha256(raw).hexdigest() != digest:
        raise _changed(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _changed(path) from None


#: A URL (``https://...``, ``s3://``, ``hf://``, ``file://``): a scheme and ``://``, as RFC 3986 spells one.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def url_problem(text: str) -> str | None:
    """What is wrong with a path key holding a URL (a dataset or a prompt file), or None. The tuner
    reads local files only: it pins a dataset by the SHA-256 of the bytes it read, and a download
    may give other bytes on each node. (QA: ``path: https://huggingface.co/...`` read as the
    relative path ``https:/huggingface.co/...``, "not found ... read from the suite file's folder".)"""
    if not _URL.match(text):
        return None
    if not text.lower().startswith(("http://", "https://")):  # s3://, hf://, gs://: their own tools copy them
        return f"{text} is a URL, and the tuner reads local files only: copy it to this machine and give the file"
    name = text.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0].split("#", 1)[0] or "FILE"
    return (f"{text} is a URL, and the tuner reads local files only: download it first "
            f"(curl -L -o {name} '{text}') and give the file")


#: Entries of a folder looked through for a name that differs in case only (a folder of a million
#: shards is not listed whole for a hint).
_MAX_LISTED = 10_000


def _found_instead(given: str, base_dir: Path) -> str:
    """The hint for a ``dataset.path`` not found when a file it was likely meant for is there: the path
    with Windows' ``\\`` separators as ``/``, without the blanks around it (quoted YAML keeps them,
    and the error line does not show a trailing one), or a name differing in case only (a file copied
    from macOS or Windows, whose file systems ignore case); "" otherwise. (QA: each was "not found",
    the path looking right.)"""
    def at(text: str) -> Path:
        return Path(text) if Path(text).is_absolute() else base_dir / text

    tries = []
    if "\\" in given:
        tries.append((given.replace("\\", "/"), "folders are separated by / here, not \\"))
    if given != given.strip():
        tries.append((given.strip(), "the path has blanks around it"))
    bare = given.strip()
    if len(bare) > 2 and bare[0] == bare[-1] and bare[0] in "'\"":
        # QA qa152: path: "'d.jsonl'" (quoted twice, once for YAML and once as a shell would) keeps the
        # inner quotes as part of the name
        bare = bare[1:-1].strip()
        tries.append((bare, "the path is written with its quotes, and YAML keeps them as part of the name"))
    for text, why in tries:
        if at(text).is_file():
            return f"; {text} is there ({why}): give it as dataset.path"
    drive = re.match(r"[A-Za-z]:[\\/]", bare)
    if drive:
        # a Windows path (C:\data\d.jsonl) copied into a study run here: read as a relative path under the
        # suite's folder, it was "not found" alone (QA qa152)
        name = re.split(r"[\\/]", bare)[-1]
        near = (f"; {name} is there, in {base_dir}: give it as dataset.path" if name and at(name).is_file()
                else "")
        return (f"; {bare} is a Windows path (drive {bare[:2]}), and this machine has no drives: copy the file here "
                f"and give its path here, relative to the suite's folder or from /{near}")
    variants = _case_variants(bare.replace("\\", "/"), base_dir)
    if variants:
        backslash = "folders are separated by / here, not \\, and " if "\\" in bare else ""
        if len(variants) == 1:
            what = "its name" if Path(variants[0]).parent == Path(bare.replace("\\", "/")).parent else "its path"
            return (f"; {variants[0]} is there ({backslash}{what} differs in case, and file names here are "
                    "case-sensitive): give it as dataset.path")
        # QA qa152: with D.jsonl and d.JSONL both there, one was named as the file meant
        return (f"; {', '.join(variants[:-1])} and {variants[-1]} are there ({backslash}their names differ in case, "
                "and file names here are case-sensitive): give the one meant as dataset.path")
    path = at(bare.replace("\\", "/"))
    try:
        with os.scandir(path.parent) as entries:
            for i, entry in enumerate(entries):
                if i >= _MAX_LISTED:
                    break
                if entry.name == path.name or not entry.is_file():
                    continue
                text = str(Path(given.strip().replace("\\", "/")).with_name(entry.name))
                if unicodedata.normalize("NFC", entry.name) == unicodedata.normalize("NFC", path.name):
                    # macOS writes a name's accents decomposed (NFD), an editor here composed (NFC): the
                    # two print alike, and a byte-wise file system tells them apart. Which of the two is
                    # the file's is said as it is (QA qa152: a path typed decomposed, copied from a macOS
                    # terminal, for a file named composed, was told the file was "named on macOS: NFD")
                    decomposed = unicodedata.normalize("NFD", entry.name) == entry.name
                    how = ("a file named on macOS: Unicode NFD" if decomposed else
                           "the path is written decomposed, Unicode NFD, as macOS writes names, the file's "
                           "name composed, NFC")
                    return (f"; {shown(ascii(entry.name))} is there, the same name with its accents written as "
                            f"other code points ({how}): rename the file (mv -- "
                            f"{shlex.quote(str(path.parent / entry.name))} {shlex.quote(str(path))})")
    except OSError:
        pass
    return ""


#: Paths differing in case only named at most (a folder of many such names is not listed whole).
_MAX_VARIANTS = 8


def _case_variants(given: str, base_dir: Path) -> list[str]:
    """The files whose path differs from ``given`` (``/`` separators) in the case of its folders' names
    or its file name only, written as ``given`` is (relative, or absolute), sorted; [] when none. Each
    folder is looked through for its names (up to :data:`_MAX_LISTED` entries; :data:`_MAX_VARIANTS`
    paths kept). (QA qa152: ``Data\\d.jsonl`` for ``data/d.jsonl``, a folder's case, was "not found"
    alone; with ``D.jsonl`` and ``d.JSONL`` both there only one was named.)"""
    given_path = Path(given)
    parts = given_path.parts
    if given_path.is_absolute():
        found: list[tuple[Path, Path]] = [(Path(parts[0]), Path(parts[0]))]
        parts = parts[1:]
    else:
        found = [(base_dir, Path())]
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        ahead: list[tuple[Path, Path]] = []
        for folder, written in found:
            if part in (".", ".."):
                ahead.append((folder / part, written / part))
                continue
            try:
                with os.scandir(folder) as entries:
                    for i, entry in enumerate(entries):
                        if i >= _MAX_LISTED:
                            break
                        if entry.name.lower() == part.lower() and (entry.is_file() if last else entry.is_dir()):
                            ahead.append((folder / entry.name, written / entry.name))
            except OSError:
                continue
        found = ahead[:_MAX_VARIANTS]
    return sorted(str(written) for _, written in found if str(written) != str(given_path))


#: Suffixes of plain text files, read as a prompt a line by other tools (vLLM's benchmarks/sonnet.txt).
_TEXT_SUFFIXES = (".txt", ".text")


def _counts_only(path: Path) -> str | None:
    """The header of a CSV or TSV file ``path`` when it holds token counts and no text column (a request
    trace: BurstGPT's ``Timestamp, Model, Request tokens, Response tokens, Total tokens, Log Type``, Azure's
    ``TIMESTAMP, ContextTokens, GeneratedTokens``), else None. Reads the first line alone."""
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 16).decode("utf-8", errors="replace").removeprefix("\ufeff")
    except OSError:
        return None
    columns = [c.strip().strip('"').strip() for c in first.strip().split("\t" if "\t" in first else ",")]
    named = {re.sub(r"[^a-z]", "", c.lower()) for c in columns}
    if not any("token" in c for c in named) or named & TEXT_COLUMNS:
        return None
    return ", ".join(columns)


#: Suffixes of the data files a folder of shards holds, by the layout their join is read as.
_SHARD_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "sharegpt"}
#: Shards named at most in a line.
_SHARDS_NAMED = 3


def _shards(files: list[Path]) -> str | None:
    """What a set of data files given for one dataset (a folder's, or a pattern's matches: a Hugging Face
    download's ``train-00000-of-00002.jsonl`` shards) says, with the command that joins them into one file
    beside their folder, or None when none is a data file: JSON lines with ``awk 1`` (each line whole, a
    shard without a last line end too, where ``cat`` joins its last row to the next shard's first), ShareGPT
    lists with ``jq -s add``. (QA qa188: a folder was "is a folder; give a file", a pattern "not found".)"""
    kinds: dict[str, list[Path]] = {}
    for f in sorted(files):
        if f.suffix.lower() in _SHARD_SUFFIXES and f.is_file():
            kinds.setdefault(_SHARD_SUFFIXES[f.suffix.lower()], []).append(f)
    if not kinds:
        return None
    layout, found = max(kinds.items(), key=lambda kv: len(kv[1]))
    folder = found[0].parent
    suffix = ".jsonl" if layout == "jsonl" else ".json"
    out = shlex.quote(str(folder.parent / f"{folder.name}{suffix}"))
    names = ", ".join(shown(f.name) for f in found[:_SHARDS_NAMED]) + (", ..." if len(found) > _SHARDS_NAMED else "")
    words = " ".join(shlex.quote(str(f)) for f in found) if len(found) <= _SHARDS_NAMED else \
        f"{shlex.quote(str(folder))}/*{found[0].suffix}"
    join = f"awk 1 {words} > {out}" if layout == "jsonl" else f"jq -s add {words} > {out}"
    noun = "JSON-lines file" if layout == "jsonl" else "JSON file"
    return (f"{counted(len(found), noun)} ({names}), and the tuner reads one file: give one, or join them ({join} "
            "writes them as one; give that file as dataset.path)")


def _too_large(path: Path, layout: str) -> str | None:
    """What a dataset file over :data:`MAX_DATASET_BYTES` says, or None: its size and the command that
    writes a part of its rows beside it, each whole (QA qa188: a 2 GiB export was told "check the path",
    which was right). JSON lines: ``head -n N``, N rows being about half the limit by the lengths of the
    lines in its first MiB; a ShareGPT list, one JSON document: jq's streaming parser writes its first
    conversations one a line without holding the file (N by the conversations begun in its first MiB),
    which SGLang's custom layout reads as ShareGPT's."""
    try:
        size = path.stat().st_size
        if size <= MAX_DATASET_BYTES or not path.is_file():
            return None
        with open(path, "rb") as f:
            head = f.read(_CHUNK)
    except OSError:
        return None
    # a row's bytes, by the rows begun in the first MiB: its lines; a ShareGPT list's "conversations" keys
    per_row = len(head) / max(1, head.count(b'"conversation') if layout == "sharegpt" else head.count(b"\n"))
    rows = max(1, int(MAX_DATASET_BYTES / 2 / per_row))
    lead = 10 ** (len(str(rows)) - 1)
    rows = rows // lead * lead  # its leading digit: 340,123 rows -> 300,000
    big = f"{_size_text(size)}, over the {_size_text(MAX_DATASET_BYTES)} a dataset file may be"
    if layout == "sharegpt":
        out = shlex.quote(str(path.with_name(f"{path.stem}.head.jsonl")))
        return (f"{path}: {big}; give a part of it: its first conversations one a line (jq -cn --stream "
                f"'fromstream(1|truncate_stream(inputs))' {shlex.quote(str(path))} | head -n {rows} > {out} writes "
                f"{rows:,} of them so, some half that size by its first ones, without holding the file; give that "
                "file as dataset.path with format: custom, which reads them as the sharegpt layout does)")
    out = shlex.quote(str(path.with_name(f"{path.stem}.head{path.suffix}")))
    return (f"{path}: {big}; give a part of it: its first rows (head -n {rows} {shlex.quote(str(path))} > {out} "
            f"writes {rows:,} of them, some half that size by the length of its first lines; give that file as "
            "dataset.path)")


#: The last draw (:func:`draw`): its key (:func:`_draw_key`, taken before the file was read) and its result.
_LAST_DRAW: list[tuple[tuple, tuple[list[dict], str, dict[str, int]]]] = []


def _draw_key(spec: DatasetSpec, base_dir: Path) -> tuple | None:
    """What a draw depends on: the file (its resolved path, identity, size and times) and the spec; None
    when the path is no regular file (a draw of it refuses it)."""
    path = Path(spec.path) if Path(spec.path).is_absolute() else base_dir / spec.path
    try:
        st = os.stat(path)
        resolved = str(path.resolve())
    except (OSError, RuntimeError, ValueError):
        return None
    if not os.path.isfile(resolved):
        return None
    return (resolved, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, spec.model_dump_json())


def _sha256_of(path: str) -> str | None:
    """The file's SHA-256, a chunk at a time; None if it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


class DrawCut(Exception):
    """:func:`draw` given ``at_most`` stopped reading at the request past it: ``prompts`` holds the
    first ``at_most + 1`` requests drawn (in the file's order, as a draw without ``n`` keeps them),
    so the file holds more than ``at_most``; the rows after them were neither read nor checked."""

    def __init__(self, prompts: list[dict]):
        super().__init__(f"more than {len(prompts) - 1} requests")
        self.prompts = prompts


def draw(spec: DatasetSpec, base_dir: Path, source: str,
         where: str = "dataset", at_most: int | None = None) -> tuple[list[dict], str, dict[str, int]]:
    """The requests of a dataset as prompt mappings (``name``, ``text``, ``messages``, ``max_tokens``,
    ``category``), its SHA-256 and the rows left out of the draw (``dropped_short``,
    ``dropped_by_filters``: :class:`DatasetSpec`'s fields of those names). Raises :class:`ConfigError` naming
    the dataset file and the line (or the suite and key) on any problem.

    A command loads its study file's suite more than once (the config, then each check of the preflight:
    QA qa188, `tuner study create` drew a 100,000-row file six times, `study run` seven, each a UTF-8 scan
    and a parse of every row: minutes for a file of a GiB). The last draw is kept, and the same draw again
    (the same spec, and the same file: path, identity, size and times unchanged, and its bytes' SHA-256 that
    of the draw, one streamed pass) returns its result without parsing a row; a file changed in any of them
    is drawn again, and an error is never kept.

    ``at_most`` (a draw without ``n`` only): raise :class:`DrawCut` as soon as more requests than that
    pass, before the rest of the file is parsed (a suite that refuses so large a draw without ``n``,
    :func:`tuner.config.suite.refuse_large_draw_without_n`, says so at once: QA qa207, 79 s at 100 MB).
    The file's size, UTF-8 and SHA-256 are checked first, as for every draw; a cut draw is not kept."""
    key = _draw_key(spec, base_dir)
    if key is not None and _LAST_DRAW and _LAST_DRAW[0][0] == key:
        rows, digest, dropped = _LAST_DRAW[0][1]
        if _sha256_of(key[0]) == digest:
            return [dict(r) for r in rows], digest, dict(dropped)
    _LAST_DRAW.clear()  # (a draw that fails lets go of the last one too: its rows may be large)
    rows, digest, dropped = _draw(spec, base_dir, source, where, at_most if spec.n is None else None)
    if key is not None:
        _LAST_DRAW.append((key, (rows, digest, dropped)))
    return [dict(r) for r in rows], digest, dict(dropped)


def _draw(spec: DatasetSpec, base_dir: Path, source: str, where: str,
          at_most: int | None = None) -> tuple[list[dict], str, dict[str, int]]:
    """:func:`draw`, reading the file."""
    if (problem := url_problem(spec.path)) is not None:
        raise ConfigError(source, f"{where}.path", problem)
    path = Path(spec.path) if Path(spec.path).is_absolute() else base_dir / spec.path
    if not path.exists():
        if path.is_symlink():  # QA: a link to a file not there (a data disk not mounted), or a loop of
            # links, was "not found", though the path is there: say which link points where
            try:
                path.resolve(strict=True)
            except RuntimeError:  # Python < 3.13: a loop of links
                problem = "a loop of symbolic links"
            except OSError as exc:
                problem = ("a loop of symbolic links" if exc.errno == errno.ELOOP
                           else f"a symbolic link to {os.readlink(path)}, which does not exist")
            else:
                problem = f"a symbolic link to {os.readlink(path)}, which cannot be read"
            raise ConfigError(source, f"{where}.path", f"{path} is {problem}; mend the link or give the file itself")
        if any(c in spec.path for c in "*?[") and (said := _shards([Path(p) for p in glob.glob(str(path))])):
            # a pattern, as a Hugging Face data_files or a shell takes one: the tuner reads the file named
            raise ConfigError(source, f"{where}.path", f"{path} is a pattern, matching {said}")
        raise ConfigError(source, f"{where}.path", f"{path} not found (a relative path is read from {base_dir}: "
                                                   "the suite file's folder, or the study file's for an inline suite)"
                                                   + _found_instead(spec.path, base_dir))
    if path.is_dir():
        try:
            with os.scandir(path) as entries:
                files = [Path(e.path) for _, e in zip(range(_MAX_LISTED), entries)]
        except OSError:
            files = []
        if (said := _shards(files)) is not None:
            raise ConfigError(source, f"{where}.path", f"{path} is a folder of {said}")
    if (too_large := _too_large(path, spec.layout())) is not None:
        raise ConfigError(source, f"{where}.path", too_large)
    try:
        check_regular_file(path, MAX_DATASET_BYTES)
        digest, not_text, start = _scan(path)
    except ConfigError as exc:
        raise ConfigError(source, f"{where}.path", f"{path}: {exc.message}") from None
    if spec.sha256 is not None and spec.sha256 != digest:
        raise ConfigError(source, f"{where}.sha256", f"{path} has SHA-256 {digest}, not the one the suite "
                                                     "pins; the file changed")
    if not_text is not None:
        raise not_text
    layout = spec.layout()
    total = passed = short = 0

    def passing() -> Iterator[tuple[int, dict]]:
        # every row is read (and checked) here, whether or not it is kept
        nonlocal total, passed, short
        rows: Iterable[dict | None] = (_jsonl_rows(str(path), _jsonl_lines(path, digest)) if layout == "jsonl"
                else _custom_rows(str(path), _jsonl_lines(path, digest), spec.max_output_tokens)
                if layout == "custom"
                else _sharegpt_rows(str(path), _sharegpt_text(path, digest), spec.max_output_tokens))
        for row in rows:
            if row is None:  # dropped by SGLang's rule: counted, and no position (the draw's order is
                short += 1   # over the rows SGLang's reader keeps, as before the count was kept)
                continue
            position = total
            total += 1
            chars = len(row["text"])
            out_len = min(row["max_tokens"] or spec.default_max_tokens, spec.max_output_tokens)
            if chars < spec.min_prompt_chars or (spec.max_prompt_chars is not None and chars > spec.max_prompt_chars):
                continue
            if out_len < spec.min_output_tokens:
                continue
            passed += 1
            yield position, {**row, "max_tokens": out_len}

    try:
        if spec.n is None:
            kept = list(passing() if at_most is None else itertools.islice(passing(), at_most + 1))
        else:
            # The n first in the drawn order (a SHA-256 of seed and position), kept while reading:
            # in that order, so the first few (``single.prompts``) are a random sample too.
            kept = heapq.nsmallest(spec.n, passing(), key=lambda pr: _order_key(spec.seed, pr[0]))
    except ConfigError as exc:
        if path.suffix.lower() in (".csv", ".tsv") and exc.key == "line 1" and "not valid JSON" in exc.message \
                and (counts := _counts_only(path)) is not None:
            # QA (qa161): BurstGPT's trace (Timestamp, Model, Request tokens, Response tokens, ...) was given the
            # pandas line, whose rows have no prompt: refused a second time, the file holding no text at all
            raise ConfigError(exc.source, "", f"a {path.suffix[1:].upper()} file of token counts ({counts}), no text: "
                                              "a request trace such as BurstGPT's holds no prompt to send; give a "
                                              "file of prompts (JSON lines, a prompt or messages object per line) "
                                              "and the lengths as each row's max_tokens") from None
        # jq -R reads each line as a JSON string, with its CR (a Windows file) and a byte-order mark, which
        # the filter drops, else every prompt was sent with a "\r" (QA qa166)
        text_fix = ("the tuner reads a prompt or messages object per line; to send each line that is not blank as a "
                    "prompt (jq -R -c 'ltrimstr(\"\\ufeff\") | rtrimstr(\"\\r\") | select(test(\"\\\\S\")) | "
                    f"{{prompt: .}}' {shlex.quote(str(path))} > {shlex.quote(one_line_copy(str(path)))} writes them "
                    "so; give that file as dataset.path)")
        if path.suffix.lower() in _TEXT_SUFFIXES and exc.key == "line 1" and (
                "not valid JSON" in exc.message or exc.message == "expected a JSON object with prompt or messages"):
            # QA (qa161): vLLM's sonnet.txt, a prompt's text a line, was "line 1: not valid JSON (Expecting
            # value)", with no word that it is a text file (a first line "2024" is JSON, a number: QA qa166)
            raise ConfigError(exc.source, "", f"a plain text file, not JSON lines: {text_fix}") from None
        if path.suffix.lower() in (".csv", ".tsv") and exc.key == "line 1" and "not valid JSON" in exc.message:
            # QA: a CSV export was "line 1: not valid JSON (Expecting value)". The files are named as the error
            # names them (QA qa166: the base name alone, read_csv('d.csv') failed from any other folder)
            sep = ", sep=chr(9)" if path.suffix.lower() == ".tsv" else ""
            program = (f"import pandas as p; p.read_csv({str(path)!r}{sep}).to_json({str(path.with_suffix('.jsonl'))!r}, "
                       "orient='records', lines=True, force_ascii=False)")
            # a double-quoted shell word, as before, unless the path holds what the shell reads inside one
            shell = (f'"{program}"' if not set(str(path)) & set('"$`\\!\'') else shlex.quote(program))
            raise ConfigError(exc.source, "", f"a {path.suffix[1:].upper()} file, not JSON: the tuner reads JSON lines "
                                              "(a prompt or messages object per line) or a ShareGPT JSON list; "
                                              f"convert it (python -c {shell}, its columns named prompt and "
                                              "max_tokens)") from None
        if exc.key == "line 1" and exc.message == "not valid JSON (Expecting value)" and start.isalpha():
            # a file of another name whose first line starts with a word, which no JSON value does: prompts
            # written a line each, named prompts.jsonl (or with no suffix, or .md) for being lines (QA qa188:
            # "line 1: not valid JSON (Expecting value)", no word of text and no fix; the .txt line above)
            raise ConfigError(exc.source, "", f"text, not JSON: line 1 starts with a word, as a plain text file's "
                                              f"lines do; {text_fix}") from None
        if not ("not valid JSON" in exc.message or "expected a JSON" in exc.message
                or (layout == "custom" and exc.message.startswith("expected {conversations"))):
            raise
        if not _looks_like_other_layout(start, "jsonl" if layout == "custom" else layout):
            raise  # one bad line (or a broken list) in a file of its layout: no hint to change it
        other, shape = (("jsonl", "one JSON object per line") if layout == "sharegpt"
                        else ("sharegpt", "one JSON list of conversations"))
        if layout == "sharegpt" and _first_row_is_conversation(path):
            # QA: ShareGPT conversations one a line saved as .json were sent to format: jsonl, which
            # then sent them on to format: custom: two tries for one fix
            other, shape = "custom", "one conversation per line (SGLang's bench_serving --dataset-name custom layout)"
        # a format given is a guess too (QA qa188: ShareGPT conversations one a line, format: sharegpt, were
        # "line 2: not valid JSON (Extra data)"; a ShareGPT list given format: custom "line 1: expected
        # {conversations: ...}", neither with the layout that reads them)
        why = " from the file's suffix" if spec.format is None else ", the format given"
        raise ConfigError(exc.source, exc.key, f"{exc.message}; read as {layout}{why}: "
                                               f"set format: {other} if it is {shape}") from None
    if not total:
        what = ("no row" if layout == "jsonl"
                else "no conversation with a prompt and a reply of 2 tokens or more, its first two turns")
        raise ConfigError(source, where, f"{path} holds no request ({what}); give a file with some")
    if not passed:
        raise ConfigError(source, where, f"no request of {path} ({total} rows, layout {layout}) passes the "
                                         "length filters; widen min/max_prompt_chars or min_output_tokens")
    if spec.n is not None and spec.n > passed:
        raise ConfigError(source, f"{where}.n", f"{spec.n} requests asked for, but only {passed} of "
                                                f"{path}'s {total} rows pass the filters; lower n")
    dropped = {"dropped_short": short, "dropped_by_filters": total - passed}
    prompts = []
    ids = [row.get("id") for _, row in kept]
    # a JSON true/false is no id (Python's bool is an int: the requests were named "True" and "False")
    use_ids = (all(isinstance(i, (str, int)) and not isinstance(i, bool) and str(i).strip() for i in ids)
               and len(set(map(str, ids))) == len(ids))
    for (position, row), rid in zip(kept, ids):
        label = f"line{row['line']}" if layout in ("jsonl", "custom") else f"#{row['line']}"
        name = str(rid) if use_ids else label
        prompts.append({"name": name, "text": row["text"], "messages": row["messages"],
                        "max_tokens": row["max_tokens"], "category": row["category"]})
    if at_most is not None and len(prompts) > at_most:
        raise DrawCut(prompts)
    return prompts, digest, dropped
