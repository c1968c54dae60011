"""The fix lines of a dataset file's refusals: for a file laid out as another tool writes it (an OpenAI or
Anthropic request log, a Batch API input, a Gemini request, ShareGPT as JSON lines, instruction-tuning
and question-answer rows, pretty-printed objects, a JSON list of rows), the ``jq`` one-liner that writes
the rows the tuner reads, into a file beside the given one (:func:`one_line_copy`: never over it), both
named as the error line names them and quoted for the shell; and the keys by which those layouts are
told apart.

Only words here: :mod:`tuner.config.dataset` reads the file, decides what it refuses and where, and
adds the fix from here to its error line; nothing here reads a file or raises.

Why one module of over 400 lines: it is one table of layouts, each told by its keys and given its fix,
and a layout's test reads the whole of it (which keys win when a row matches two); split, the order in
which layouts are told apart would be spread over files.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any


def one_line_copy(source: str) -> str:
    """The file a conversion command writes beside ``source``: its name with ``.lines.jsonl`` for its
    suffix (never ``source`` itself: ``> FILE`` empties the file before the command reads it)."""
    path = Path(source)
    return str(path.with_name(f"{path.stem}.lines.jsonl"))


def nul_bytes_fix(source: str, count: int, what: str) -> str:
    """The hint for NUL bytes alone where a row or the file's end should be (``what``: where they are):
    a file its writer left unfinished (a crash, a full disk: the file system keeps its length and zeroes
    the bytes never written) or padded, with the ``tr`` line that writes it without them, beside it, its
    suffix kept (QA qa188: such a JSON-lines file was asked "UTF-16 text?", a ShareGPT one told "Extra
    data" alone)."""
    path = Path(source)
    out = shlex.quote(str(path.with_name(f"{path.stem}.clean{path.suffix}")))
    return (f"; {what} {count:,} NUL byte{'s' if count != 1 else ''} alone, the end of a file its writer left "
            f"unfinished (a crash, a full disk) or padded: drop them (tr -d '\\000' < {shlex.quote(source)} > {out} "
            "writes the file without them; give that file as dataset.path: a row they cut short is named next)")


def pretty_printed_fix(source: str) -> str:
    """The hint for a JSON-lines file whose objects span several lines each: the command that writes
    each whole on one line, the files named as the error line names them, quoted for the shell."""
    return ("; '{' alone on its line: the objects are pretty-printed, and JSON lines hold each one whole on a line "
            f"(jq -c . {shlex.quote(source)} > {shlex.quote(one_line_copy(source))} writes them so; give that "
            "file as dataset.path)")


#: Keys that hold a recorded reply beside the request (prompt/completion pairs, instruction data,
#: preference data).
REPLY_KEYS = ("completion", "response", "output", "answer", "chosen", "rejected")


#: Fields of an OpenAI request body that a logged request carries beside its ``messages``.
OPENAI_FIELDS = frozenset({
    "model", "temperature", "top_p", "n", "stream", "stream_options", "stop", "seed", "user", "logprobs",
    "top_logprobs", "frequency_penalty", "presence_penalty", "logit_bias", "response_format", "tools",
    "tool_choice", "parallel_tool_calls", "metadata", "store", "service_tier", "reasoning_effort", "modalities"})


#: Keys of a request trace's row that count tokens (Mooncake's trace, OpenAI's usage fields, BurstGPT's
#: columns as JSON): with no text key beside them, the row holds no request (:func:`_other_layout_fix`).
_COUNT_KEYS = frozenset({"input_length", "output_length", "hash_ids", "input_tokens", "output_tokens",
                         "prompt_tokens", "completion_tokens", "request_tokens", "response_tokens",
                         "Request tokens", "Response tokens", "ContextTokens", "GeneratedTokens"})


#: Keys of other common row layouts whose request a jq line can make, or that say the row holds none (an OpenAI
#: response's ``choices``), named first among a row's unknown keys (:func:`_other_layout_fix`).
OTHER_LAYOUT_KEYS = ("body", "custom_id", "text", "question", "contents", "request", "params", "turns", "arguments",
                     "data", "choices")


def ultrachat_turns(row: Any) -> bool:
    """Whether a row is UltraChat's original layout (stingning/ultrachat: ``{"id", "data": [TEXT, TEXT,
    ...]}``, the conversation's turns as texts, the user's first), on which EAGLE drafts are trained."""
    data = row.get("data") if isinstance(row, dict) else None
    return isinstance(data, list) and len(data) > 0 and all(isinstance(t, str) for t in data)


#: The jq object that makes a ``custom`` line of an UltraChat row: its texts as the turns' contents,
#: which SGLang's custom reader pairs as ShareGPT's (the first the prompt, the second's length the output's).
ULTRACHAT_TURNS = "{id, conversations: [.data[] | {content: .}]}"


def _gemini_request(row: dict) -> str:
    """The jq filter that makes a tuner row of a Gemini API ``generateContent`` request (``contents``
    of ``{role, parts: [{text}]}``, optionally ``systemInstruction`` and ``generationConfig.
    maxOutputTokens``; the Python SDK's snake_case spelling alike): each turn its role (Gemini's
    ``model`` is OpenAI's ``assistant``; a turn without a role is the user's) and its parts as OpenAI
    text parts, so a part that is no text (``inlineData``) is refused when the file is read rather than
    dropped; a system instruction the first turn; the output length ``max_tokens`` (null: none given,
    read as ``default_max_tokens``)."""
    system = "systemInstruction" if "systemInstruction" in row or "system_instruction" not in row \
        else "system_instruction"
    config, length = (("generation_config", "max_output_tokens") if "generation_config" in row
                      and "generationConfig" not in row else ("generationConfig", "maxOutputTokens"))
    parts = "[.parts[] | {type: \"text\", text}]"
    return (f"{{messages: ([.{system} // empty | {{role: \"system\", content: {parts}}}] + [.contents[] | "
            f"{{role: (if .role == \"model\" then \"assistant\" else (.role // \"user\") end), content: {parts}}}]), "
            f"max_tokens: .{config}.{length}}}")


def _request_of(request: dict) -> str:
    """The jq object that keeps a logged OpenAI request's own keys as a row's: its ``messages`` (chat)
    or ``prompt`` (completions), and its output length as ``max_tokens``, which the chat API now names
    ``max_completion_tokens`` (``max_tokens`` deprecated). ``{messages, max_tokens}`` wrote ``null``
    for what the request did not hold: a completions log's prompt lost (``"messages": null``, refused
    next), and a ``max_completion_tokens`` length read as ``default_max_tokens``, every request measured
    at another length, silently (QA qa152: a log of 64 read as 256)."""
    text = "messages" if "messages" in request else "prompt"
    others = [k for k in _LENGTH_KEYS if k in request]
    length = (f"max_tokens: ({' // '.join('.' + k for k in ['max_tokens', *others])})" if others else "max_tokens")
    return f"{{{text}, {length}}}"


#: A request's output length as other APIs name it, where a row writes ``max_tokens``: OpenAI's chat API
#: now (``max_completion_tokens``), SGLang's /generate and Hugging Face's ``generate``
#: (``max_new_tokens``), OpenAI's Responses API and Gemini's SDK (``max_output_tokens``).
_LENGTH_KEYS = ("max_completion_tokens", "max_new_tokens", "max_output_tokens")


def _length_fix(key: str, source: str) -> str:
    """The fix for a row giving its output length as ``key`` (:data:`_LENGTH_KEYS`): the jq line that
    renames it ``max_tokens`` in every row (a row's own ``max_tokens`` kept where it has both), so no
    row's length is lost (QA qa152: ``max_new_tokens`` and ``max_output_tokens`` were "unknown key", and
    ``max_completion_tokens`` was told to be written as max_tokens with no command)."""
    return (f"write the request's output length as max_tokens, {key} being another API's name for it "
            f"(jq -c '.max_tokens = "
            f"(.max_tokens // .{key}) | del(.{key})' {shlex.quote(source)} > {shlex.quote(one_line_copy(source))} "
            "writes them so; give that file as dataset.path)")


def _responses_request() -> str:
    """The jq filter that makes a tuner row of an OpenAI Responses API request (``/v1/responses``:
    ``input``, a text or a list of ``{role, content}`` items whose content is a text or
    ``input_text``/``output_text`` parts; ``instructions``; ``max_output_tokens``): the instructions a
    system turn, a text input one user turn, each item its role and its parts as Chat Completions text
    parts (a part that is no text, ``input_image``, has no text and is refused when the file is read,
    not dropped), and ``max_output_tokens`` as ``max_tokens`` (null: none given, read as
    ``default_max_tokens``)."""
    return ('{messages: ([.instructions // empty | {role: "system", content: .}] + (if (.input | type) == "string" '
            'then [{role: "user", content: .input}] else [.input[] | {role, content: (if (.content | type) == '
            '"string" then .content else [.content[] | {type: "text", text}] end)}] end)), '
            'max_tokens: .max_output_tokens}')


def _anthropic_request() -> str:
    """The jq filter that makes a tuner row of an Anthropic Messages API request (``system``, a text or
    text blocks, beside ``messages`` whose content is a text or content blocks; ``max_tokens``): the
    system prompt the first turn (the chat API's place for it; dropped, every request was sent without
    it), each block a text part without its ``cache_control`` (a block that is no text, an image or a
    tool's, has no text and is refused when the file is read, not dropped)."""
    return ('{messages: ((if .system == null then [] elif (.system | type) == "string" then [{role: "system", '
            'content: .system}] else [{role: "system", content: [.system[] | {type: "text", text}]}] end) + '
            '[.messages[] | {role, content: (if (.content | type) == "string" then .content else [.content[] | '
            '{type: "text", text}] end)}]), max_tokens}')


def _other_layout_fix(key: str, source: str, row: dict) -> str | None:
    """The fix for a row of another common layout, told by its ``key``, or None: an OpenAI Batch API
    input line (``custom_id``, ``method``, ``url``, ``body``: the request is its body), a Hugging Face
    text dataset's ``text`` column, a question-answer set's ``question`` (QA: each was "unknown key;
    expected prompt or messages ...", the question's reply refused first and the question next: two
    tries). The command writes a file beside ``source``, both named as the error line names them."""
    out = f"{shlex.quote(source)} > {shlex.quote(one_line_copy(source))}"
    then = " writes them so; give that file as dataset.path)"
    if isinstance(row.get("messages"), list) and isinstance(row.get("system"), (str, list)):
        # QA: an Anthropic Messages API log (its system prompt a top-level key) was "system: unknown key",
        # and with its "model" the logged OpenAI request's line, {messages, max_tokens}, which dropped the
        # system prompt: every request sent without it
        return ("an Anthropic Messages API request (system beside messages): give the system prompt as the first "
                f"turn, role system, and content blocks as text parts (jq -c '{_anthropic_request()}' {out}{then}")
    if key == "prompt_id" and isinstance(row.get("prompt"), str) and isinstance(row.get("messages"), list):
        # UltraChat's rows (HuggingFaceH4/ultrachat_200k: prompt, prompt_id, messages): messages is the whole
        # conversation, the model's replies too, so its prompt alone is the request (QA qa161: "prompt_id:
        # unknown key" without a fix)
        return ("an UltraChat row (prompt, prompt_id, messages: the whole conversation, the replies too): the request "
                f"is its prompt (jq -c '{{prompt, id: .prompt_id}}' {out}{then}")
    if "prompt" in row or "messages" in row:
        return None  # a request row with an extra key: the key alone is what is wrong
    if isinstance(row.get("choices"), list):
        # an OpenAI API response (a chat.completion or text_completion object) holds the reply, not the request
        # (QA qa207: with its "model", the logged request's line, jq -c '{prompt, max_tokens}', which wrote nulls)
        return ("an OpenAI API response (choices: the model's reply, beside id, object, usage): it holds no request "
                "to send; give the requests that were sent, a prompt or messages object per line with its max_tokens")
    logged = row.get("request")
    if key == "request" and isinstance(logged, dict) and ("messages" in logged or "prompt" in logged):
        # a log of each request beside its response ({request: {model, messages, ...}, response: {...}})
        beside = " beside its response" if "response" in row else ""
        return (f"a request logged under request{beside}: the row is that request (jq -c "
                f"'.request | {_request_of(logged)}' {out}{then}")
    if set(row) & _COUNT_KEYS and not {re.sub(r"[^a-z]", "", k.lower()) for k in row} & TEXT_COLUMNS:
        # a request trace of lengths alone, Mooncake's (timestamp, input_length, output_length, hash_ids), which
        # a benchmark fills with made-up text: no jq line makes prompts of it (QA qa166: "hash_ids: unknown key")
        return (f"a request trace of token counts ({', '.join(row)}), no text: it holds no prompt to send; give a file "
                "of prompts (a prompt or messages object per line) and the lengths as each row's max_tokens")
    params = row.get("params")
    if key in ("params", "custom_id") and isinstance(params, dict) and isinstance(params.get("messages"), list):
        # an Anthropic Message Batches line ({custom_id, params}): the request is its params
        return ("an Anthropic Message Batches line (custom_id, params): the request is its params, an Anthropic "
                f"Messages API request (jq -c '.params | {_anthropic_request()}' {out}{then}")
    body = row.get("body")
    if key in ("body", "custom_id") and isinstance(body, dict) and "input" in body and "messages" not in body:
        # a Batch API line for /v1/responses: its body is a Responses request, whose turns are "input" and
        # output length "max_output_tokens" (QA qa152: "body: unknown key"; the chat line wrote null for both)
        return (f"an OpenAI Batch API input line for the Responses API (custom_id, method, url, body: {{input, "
                f"max_output_tokens}}): the request is its body, its input the turns and max_output_tokens the "
                f"max_tokens (jq -c '.body | {_responses_request()}' {out}{then}")
    if key in ("body", "custom_id") and isinstance(body, dict) and ("messages" in body or "prompt" in body):
        return (f"an OpenAI Batch API input line (custom_id, method, url, body): the request is its body "
                f"(jq -c '.body | {_request_of(body)}' {out}{then}")
    # a Gemini API request (QA qa152: "contents: unknown key"), alone or as a Gemini/Vertex AI batch
    # line holds it ({"key" or "custom_id", "request": {contents, ...}}): the tuner's row is OpenAI chat
    request = row.get("request")
    if key == "request" and isinstance(request, dict) and isinstance(request.get("contents"), list):
        return ("a Gemini API batch line (request: {contents: [{role, parts}], ...}): the request is its request, "
                f"its turns OpenAI's messages (jq -c '.request | {_gemini_request(request)}' {out}{then}")
    if key in ("contents", "generationConfig", "systemInstruction", "generation_config", "system_instruction") \
            and isinstance(row.get("contents"), list):
        return ("a Gemini API request (contents: [{role, parts: [{text}]}]): give its turns as OpenAI messages, "
                "role model as assistant, and generationConfig.maxOutputTokens as max_tokens "
                f"(jq -c '{_gemini_request(row)}' {out}{then}")
    arguments = row.get("arguments")
    first = arguments.get("gen_args_0") if isinstance(arguments, dict) else None
    if key == "arguments" and isinstance(first, dict) and isinstance(first.get("arg_0"), str):
        # lm-evaluation-harness's --log_samples file (samples_TASK_*.jsonl: doc_id, doc, arguments, resps):
        # a generate_until request is arguments.gen_args_0, its prompt arg_0 and its generation
        # arguments arg_1 (max_gen_toks the output length); a loglikelihood task's arg_1 is a continuation
        # to score, no generation (QA: "arguments: unknown key")
        if not isinstance(first.get("arg_1"), dict):
            return ("an lm-evaluation-harness sample of a loglikelihood task (arguments: a context and a continuation "
                    "to score): it generates nothing; log a generate_until task's samples, or give its context as "
                    f"prompt with the length you mean (jq -c '{{prompt: .arguments.gen_args_0.arg_0, id: .doc_id}}' "
                    f"{out}{then}")
        return ("an lm-evaluation-harness sample (doc_id, doc, arguments: {gen_args_0: {arg_0: prompt, arg_1: "
                "{max_gen_toks, ...}}}, resps): the request is its arguments' prompt and max_gen_toks (jq -c "
                "'{prompt: .arguments.gen_args_0.arg_0, max_tokens: .arguments.gen_args_0.arg_1.max_gen_toks, id: "
                f".doc_id}}' {out}{then}")
    if key == "data" and ultrachat_turns(row):
        # UltraChat's original rows (QA qa188: "data: unknown key" without a fix); the custom layout reads the
        # turns as SGLang's bench_serving --dataset-name custom does, the reply's length the output length
        return ("an UltraChat row (id, data: the conversation's turns as texts, the user's first): as SGLang's "
                f"custom layout, one conversation a line (jq -c '{ULTRACHAT_TURNS}' {out} writes them so; give that "
                "file as dataset.path with format: custom)")
    turns = row.get("turns")
    if key == "turns" and isinstance(turns, list) and turns and all(isinstance(t, str) for t in turns):
        # FastChat's MT-Bench question file (llm_judge/data/mt_bench/question.jsonl: question_id, category,
        # turns): a later turn follows the model's answer to the one before, which the file does not hold,
        # so its first turn is the request (QA: "question_id: unknown key")
        return ("an MT-Bench question (question_id, category, turns): its first turn is the request, a later turn "
                "follows the model's answer to the one before, which the file does not hold (jq -c '{prompt: "
                f".turns[0], category, id: .question_id}}' {out}{then}")
    params = row.get("sampling_params")
    if key == "text" and isinstance(row.get("text"), str) and isinstance(params, dict):
        # SGLang's own /generate request (GenerateReqInput: text, sampling_params), as a log of its
        # native API holds it: its output length is sampling_params.max_new_tokens, which '{prompt:
        # .text}' dropped (read as default_max_tokens; QA qa152: named a Hugging Face text column)
        length = ", max_tokens: .sampling_params.max_new_tokens" if "max_new_tokens" in params else ""
        return ("an SGLang /generate request (text, sampling_params): give the text as prompt and "
                "sampling_params.max_new_tokens as max_tokens "
                f"(jq -c '{{prompt: .text{length}}}' {out}{then}")
    if key == "text" and isinstance(row.get("text"), str):
        return ("a text column, as Hugging Face text datasets have it: give it as prompt "
                f"(jq -c '{{prompt: .text}}' {out}{then}")
    if key == "question" and isinstance(row.get("question"), str):
        return ("a question-answer row: give the question as prompt, and its answer's length in tokens as "
                f"max_tokens if you know it (jq -c '{{prompt: .question}}' {out}{then}")
    return None


#: The jq object that makes a request of a Dolly row (databricks-dolly-15k: ``instruction``, ``context``,
#: ``response``, ``category``): the instruction and, where there is one, its context, a paragraph each,
#: its category kept as the row's label. Alpaca's line (``.input``) dropped the context: the requests of
#: every closed-QA and summarization row sent without the text they are about (QA).
_DOLLY_PROMPT = '{prompt: ([.instruction, .context] | map(select(. != null and . != "")) | join("\\n\\n")), category}'


def _dolly(row: Any) -> bool:
    """Whether a row is Dolly's instruction layout: ``instruction`` with ``context``, no ``input``."""
    return isinstance(row, dict) and "instruction" in row and "context" in row and "input" not in row


def unknown_row_key(key: str, source: str, row: dict | None = None) -> str:
    """What a JSONL row's unknown ``key`` says, with the fix where the key tells what the file is
    (QA: a ShareGPT export as JSON lines and an OpenAI request log were refused with the list of
    keys alone)."""
    if row is not None and (fix := _other_layout_fix(key, source, row)) is not None:
        return fix
    if key in ("conversations", "conversation"):
        # SGLang 0.5.23's bench_serving reads such lines as --dataset-name custom (custom.py), a
        # ShareGPT file with json.load (one JSON list): the first is this file's layout
        return ("a conversation in a JSON-lines file, SGLang's bench_serving --dataset-name custom layout: "
                "set format: custom in the dataset to read it so")
    if key in REPLY_KEYS:
        return (f"a recorded reply; a row gives the request alone (prompt or messages): drop {key}, and give the "
                "reply's length in tokens as max_tokens (else default_max_tokens applies)")
    if key in ("instruction", "input") and row is not None and _dolly(row):
        return ("an instruction-tuning row of Dolly's layout (instruction, context, response, category): give the "
                f"instruction and its context as prompt (jq -c '{_DOLLY_PROMPT}' {shlex.quote(source)} > "
                f"{shlex.quote(one_line_copy(source))} writes them so; give that file as dataset.path)")
    if key in ("instruction", "input"):
        # QA (qa161): the line named the file by its base name, without "> FILE": jq printed the rows
        return ("an instruction-tuning row (instruction, input, output): give the request as prompt "
                f"(jq -c '{{prompt: ([.instruction, .input] | map(select(. != null and . != \"\")) | "
                f"join(\"\\n\\n\"))}}' {shlex.quote(source)} > {shlex.quote(one_line_copy(source))} writes them so; "
                "give that file as dataset.path)")
    if key in _LENGTH_KEYS:
        return _length_fix(key, source)
    if key in OPENAI_FIELDS:
        # the jq line writes another file: "> requests.jsonl" on a file of that name (the README's
        # example's) emptied it before jq read it (QA)
        return ("a field of a logged OpenAI request, which a row does not set (the suite sets the sampling, "
                "temperature:, for every request; the server is the model): keep prompt or messages, "
                f"max_tokens, category, id (jq -c '{_request_of(row or {})}' {shlex.quote(source)} > "
                f"{shlex.quote(one_line_copy(source))} writes them so; give that file as dataset.path)")
    return "unknown key; expected prompt or messages, and optionally max_tokens, category (or name), id"


#: The fix for a turn logged as OpenAI's SDK returns it with a ``refusal`` text or ``annotations``: the jq
#: line that makes the refusal the turn's content where it has none and drops both keys, in every row.
SDK_TURN_FIX = ("a turn logged as OpenAI's SDK returns it, with the model's refusal or its content's annotations "
                 "(url citations): a turn sends its text as content, the refusal where there is no content, and "
                 "annotations are no part of a request (jq -c 'if has(\"messages\") then .messages |= map((if "
                 ".refusal then .content = (.content // .refusal) else . end) | del(.refusal, .annotations)) else . "
                 "end' {command} writes them so; give that file as dataset.path)")


def request_row_fix(conv: Any, source: str, *, custom: bool) -> str:
    """The fix for a conversation entry that is a request row of the ``jsonl`` layout (``prompt`` or
    ``messages``) or an instruction-tuning row (``instruction``), or "" (QA: a JSON list of such rows,
    as ``json.dump(rows)`` and pandas' ``to_json(orient="records")`` write them, saved as ``.json``,
    was "[0]: expected {id, conversations: [{from, value}, ...]}", the fix left to guess)."""
    if not isinstance(conv, dict):
        return ""
    if ultrachat_turns(conv) and "conversations" not in conv and "conversation" not in conv:
        # QA qa188: a list of UltraChat's original rows (id, data) was "[0]: expected {id, conversations: ...}"
        # without a fix
        fix = ULTRACHAT_TURNS if custom else f".[] | {ULTRACHAT_TURNS}"
        return (f"; got data, UltraChat's turns as texts, the user's first: one conversation a line as SGLang's custom "
                f"layout reads it (jq -c '{fix}' {shlex.quote(source)} > {shlex.quote(one_line_copy(source))} writes "
                "them so; give that file as dataset.path with format: custom)")
    key = next((k for k in ("prompt", "messages", "instruction") if k in conv), None)
    if key is None:
        return ""
    if custom:  # one such row a line already: the jsonl layout reads it (and names what it refuses)
        return f"; got {key}, a request row of the jsonl layout: set format: jsonl to read the file so"
    quoted, out = shlex.quote(source), shlex.quote(one_line_copy(source))
    if key == "instruction" and _dolly(conv):
        return (f"; got {key}, a JSON list of instruction-tuning rows of Dolly's layout (instruction, context, "
                f"response, category): write each as a prompt on its own line (jq -c '.[] | {_DOLLY_PROMPT}' "
                f"{quoted} > {out}) and give that file as dataset.path")
    if "prompt_id" in conv and isinstance(conv.get("prompt"), str) and isinstance(conv.get("messages"), list):
        # QA (qa166): a JSON list of UltraChat rows was sent to '.[]', whose lines were refused next
        # ("prompt_id: unknown key"): two tries for one fix
        return (f"; got {key}, a JSON list of UltraChat rows (prompt, prompt_id, messages: the whole conversation, "
                f"the replies too): the request is each one's prompt (jq -c '.[] | {{prompt, id: .prompt_id}}' "
                f"{quoted} > {out} writes them so; give that file as dataset.path)")
    if key == "instruction":  # (a row without input: null, which join wrote as "", the prompt ending "\n\n")
        return (f"; got {key}, a JSON list of instruction-tuning rows: write each as a prompt on its own line "
                f"(jq -c '.[] | {{prompt: ([.instruction, .input] | map(select(. != null and . != \"\")) | "
                f"join(\"\\n\\n\"))}}' "
                f"{quoted} > {out}) and give that file as dataset.path")
    if key in ("prompt", "messages") and not isinstance(conv.get("system"), (str, list)) \
            and set(conv) & (OPENAI_FIELDS | set(_LENGTH_KEYS)):
        # QA (qa166): a JSON list of logged OpenAI requests (model, temperature, max_completion_tokens ...) was
        # sent to '.[]', whose lines were refused next for their model: the request kept in the same line
        return (f"; got {key}, a JSON list of logged OpenAI requests: JSON lines hold one request a line, without the "
                f"fields the suite sets (jq -c '.[] | {_request_of(conv)}' {quoted} > {out} writes them so; give that "
                "file as dataset.path)")
    return (f"; got {key}, a JSON list of request rows: JSON lines hold one a line (jq -c '.[]' {quoted} > {out} "
            "writes them so; give that file as dataset.path)")


def openai_turn_fix(turn: Any, source: str) -> str:
    """The fix for a ShareGPT entry's turn given as OpenAI's ``{role, content}`` with text (LMSYS-Chat's
    ``conversation``, many exports' ``conversations``), or "": SGLang 0.5.23's sharegpt reader takes
    ``["value"]`` (``sharegpt.py``), its ``custom`` reader ``content`` first (``custom.py``), one
    conversation a line (QA: "expected {from, value} with a text value", the fix left to guess)."""
    if not (isinstance(turn, dict) and "value" not in turn and isinstance(turn.get("content"), str)):
        return ""
    return (f"; got {{role, content}}, OpenAI's turns: the custom layout reads them, one conversation a line (jq -c "
            f"'.[]' {shlex.quote(source)} > {shlex.quote(one_line_copy(source))} writes them so; give that file "
            "as dataset.path with format: custom)")


#: Column names in which a table holds a request's text: when a table has none of them and counts tokens,
#: it holds no text (:func:`tuner.config.dataset._counts_only`).
TEXT_COLUMNS = frozenset({"prompt", "prompts", "messages", "text", "question", "instruction", "input", "query",
                           "content", "conversations", "conversation", "request", "message", "context"})


#: The keys by which a conversation of a multimodal instruction set carries its image, video or audio
#: (LLaVA-Instruct and ShareGPT4V: ``image``, a file name; LLaVA-Video: ``video``; others a list of them).
MEDIA_KEYS = ("image", "images", "video", "videos", "audio", "audios")


def media_fix(key: str, source: str, *, custom: bool) -> str:
    """The refusal of a conversation that carries an image, a video or audio under ``key``: SGLang 0.5.23's
    sharegpt and custom readers take its turns' text alone (``benchmark/datasets/sharegpt.py``), so its
    prompt would be sent without what it asks about, its ``<image>`` placeholder as text: another
    workload, not the one logged. The ``jq`` line writes the file without such conversations, beside
    ``source``, in its layout (a list stays a ``.json`` list; ``custom`` lines stay lines)."""
    path = Path(source)
    out = shlex.quote(str(path.with_name(f"{path.stem}.text{path.suffix}")))
    keep = f"[{', '.join('.' + k for k in MEDIA_KEYS)}] | any(. != null and . != \"\" and . != []) | not"
    command = (f"jq -c 'select({keep})' {shlex.quote(source)} > {out}" if custom
               else f"jq 'map(select({keep}))' {shlex.quote(source)} > {out}")
    what = {"image": "an image", "images": "images", "video": "a video", "videos": "videos"}.get(key, "audio")
    return (f"the conversation carries {what} (a multimodal set's layout), which the tuner does not send: its "
            f"prompt would go without it, a placeholder such as <image> as text; drop such conversations ({command} "
            "writes the file without them; give that file as dataset.path)")
