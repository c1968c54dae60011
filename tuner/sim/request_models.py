"""Step 1 of a request's checks, as SGLang 0.5.23's FastAPI layer does it: the content type, the JSON
body, the request model (``srt/entrypoints/http_server.py``; ``GenerateReqInput`` of
``srt/managers/io_struct.py``; ``CompletionRequest`` / ``ChatCompletionRequest`` of
``srt/entrypoints/openai/protocol.py``), and the error bodies SGLang answers with
(:class:`ApiError`). :mod:`tuner.sim.requests` runs the steps in order.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Dict, List, Literal, Optional, Union, get_args

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from ..config.wording import counted

#: Where FastAPI's messages say the endpoint is (the installed file's path differs per machine).
_HTTP_SERVER = "sglang/srt/entrypoints/http_server.py"
_ENDPOINTS = {"/generate": (933, "generate_request"),
              "/v1/completions": (1861, "openai_v1_completions"),
              "/v1/chat/completions": (1871, "openai_v1_chat_completions"),
              "/flush_cache": (1027, "flush_cache")}
class ApiError(Exception):
    """A request SGLang answers with ``status`` and ``body``: JSON for a dict, plain text for a str."""

    def __init__(self, status: int, body: dict | str):
        super().__init__(body if isinstance(body, str) else json.dumps(body))
        self.status, self.body = status, body
        #: a streamed /generate request refused by the tokenizer manager: SGLang has answered 200 by
        #: then and sends the error as a stream event (http_server.py stream_results, lines 951-975)
        self.in_stream = False


def internal_server_error() -> ApiError:
    """A request whose handling in SGLang raises an exception no route catches (an ``IndexError``,
    an ``AttributeError``: the routes catch ``ValueError`` only): Starlette's
    ``ServerErrorMiddleware.error_response`` answers ``PlainTextResponse("Internal Server Error",
    status_code=500)``."""
    return ApiError(500, "Internal Server Error")


def validation_error(errors: list, endpoint: str, method: str = "POST") -> ApiError:
    """FastAPI's ``RequestValidationError`` as SGLang's handler renders it: ``str(exc)`` (FastAPI's
    ``ValidationException.__str__``, with the endpoint's file, line and route), then the error
    list (``http_server.py`` lines 669-690)."""
    line, function = _ENDPOINTS[endpoint]
    n = len(errors)
    text = f"{counted(n, 'validation error')}:\n" + "".join(f"  {e}\n" for e in errors)
    text += f'\n  File "{_HTTP_SERVER}", line {line}, in {function}\n    {method} {endpoint}'
    message = f"{text.rstrip()} {errors}"
    return ApiError(400, {"object": "error", "message": message, "type": "Bad Request",
                          "param": None, "code": 400})


def native_error(message: str, status: int = 400) -> ApiError:
    """``/generate``'s ``ValueError`` answer (http_server.py ``_create_error_response``)."""
    return ApiError(status, {"error": {"message": message}})


def openai_error(message: str, err_type: str = "BadRequestError", status: int = 400) -> ApiError:
    """``OpenAIServingBase.create_error_response`` (serving_base.py)."""
    return ApiError(status, {"object": "error", "message": message, "type": err_type,
                             "param": None, "code": status})


# ---------------------------------------------------------------------------------------------
# 1. FastAPI: content type, JSON, the request model


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")  # orjson refuses NaN and Infinity too


def read_body(raw: bytes, content_type: str | None, endpoint: str) -> Any:
    """FastAPI's body handling: JSON only under a JSON content type, else the raw bytes (which the
    model then refuses); an empty body is missing."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    is_json = media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
    if not raw:
        return None
    if not is_json:
        return raw
    try:
        # SGLang parses bodies with orjson (http_server.py lines 472-481, ORJSONRequest.json), which
        # takes UTF-8 only: a BOM, or UTF-16/32 (which json.loads would detect and decode), is a
        # JSON decode error at position 0, with orjson's words
        if raw.startswith(b"\xef\xbb\xbf"):
            raise json.JSONDecodeError("UTF-8 byte order mark (BOM) is not supported", "", 0)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise json.JSONDecodeError("str is not valid UTF-8: surrogates not allowed", "", 0) from None
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        pos = getattr(exc, "pos", 0)
        msg = getattr(exc, "msg", str(exc))
        raise validation_error([{"type": "json_invalid", "loc": ("body", pos), "msg": "JSON decode error",
                                 "input": {}, "ctx": {"error": msg}}], endpoint) from None


def require_json_content_type(content_type: str | None, endpoint: str) -> None:
    """``validate_json_request`` (http_server.py line 695), the OpenAI routes' dependency."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise validation_error([{"loc": ["header", "content-type"],
                                 "msg": "Unsupported Media Type: Only 'application/json' is allowed",
                                 "type": "value_error"}], endpoint)


def validate_body(adapter: TypeAdapter, body: Any, endpoint: str):
    if body is None:
        raise validation_error([{"type": "missing", "loc": ("body",), "msg": "Field required",
                                 "input": None}], endpoint)
    try:
        return adapter.validate_python(body)
    except pydantic.ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise validation_error(errors, endpoint) from None


@pydantic.dataclasses.dataclass
class GenerateReqInput:
    """The fields of SGLang's ``GenerateReqInput`` (io_struct.py line 177) the simulator reads or
    refuses, with SGLang's annotations, so pydantic validates them as FastAPI does there."""

    text: Optional[Union[List[str], str]] = None
    input_ids: Any = None  # SGLang: a C-loop PlainValidator; the contract checks the ints
    input_embeds: Optional[Union[List[List[List[float]]], List[List[float]]]] = None
    sampling_params: Optional[Union[List[Dict[str, Any]], Dict[str, Any]]] = None
    rid: Optional[Union[str, List[str]]] = None
    stream: bool = False
    return_logprob: Optional[Union[List[bool], bool]] = None
    top_logprobs_num: Optional[Union[List[int], int]] = None
    token_ids_logprob: Optional[Union[List[List[int]], List[int]]] = None
    return_hidden_states: Any = False
    image_data: Any = None
    video_data: Any = None
    audio_data: Any = None
    lora_path: Optional[Union[List[Optional[str]], str]] = None
    session_params: Optional[Dict[str, Any]] = None
    custom_logit_processor: Optional[Union[List[Optional[str]], str]] = None


GENERATE = TypeAdapter(GenerateReqInput)
#: /flush_cache's query parameter (http_server.py line 1027: ``timeout: float = Query(0.0, ge=0.0)``)
FLUSH_TIMEOUT = TypeAdapter(Annotated[float, Field(ge=0.0)])


def flush_timeout(raw: str | None, method: str) -> float:
    """``/flush_cache?timeout=S`` validated as FastAPI validates the query: :class:`ApiError` (400,
    SGLang's validation body) for text that is no number, or a negative one."""
    if raw is None:
        return 0.0
    try:
        return FLUSH_TIMEOUT.validate_python(raw)
    except pydantic.ValidationError as exc:
        errors = [{**e, "loc": ("query", "timeout")} for e in exc.errors(include_url=False)]
        raise validation_error(errors, "/flush_cache", method) from None


class StreamOptions(BaseModel):
    include_usage: Optional[bool] = False
    continuous_usage_stats: Optional[bool] = False


class _OpenAIBase(BaseModel):
    # protocol.py's models are plain BaseModels: unknown keys are ignored.
    model_config = ConfigDict(extra="ignore")

    model: str = "default"
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: Optional[Dict[str, float]] = None
    n: int = 1
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stream: bool = False
    stream_options: Optional[StreamOptions] = None
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    stop_token_ids: Optional[List[int]] = None
    stop_regex: Optional[Union[str, List[str]]] = None
    ignore_eos: bool = False
    json_schema: Optional[str] = None
    regex: Optional[str] = None
    ebnf: Optional[str] = None
    response_format: Optional[Dict[str, Any]] = None
    return_hidden_states: Union[bool, Literal["last"]] = False
    return_spec_tokens_details: bool = False  # protocol.py: sglext.spec_tokens_details on request
    rid: Optional[Union[List[str], str]] = None  # protocol.py: "For request id"
    lora_path: Optional[Union[List[Optional[str]], Optional[str]]] = None
    session_params: Optional[Dict] = None
    custom_logit_processor: Optional[str] = None


class CompletionRequest(_OpenAIBase):
    """protocol.py line 365 (the fields the simulator reads or refuses)."""

    prompt: Union[List[int], List[List[int]], str, List[str]]
    echo: bool = False
    logprobs: Optional[int] = None
    max_tokens: int = 16
    min_tokens: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    suffix: Optional[str] = None

    @field_validator("max_tokens")
    @classmethod
    def validate_max_tokens_positive(cls, v):
        if v is not None and v <= 0:
            raise ValueError("max_tokens must be positive")
        return v


# protocol.py lines 585-807: a chat message is one of two models, its list content one of these
# parts. The names are SGLang's, since pydantic puts them in the error locations FastAPI reports
# (``('body', 'messages', 0, 'ChatCompletionMessageUserParam', 'content')``).


class ChatCompletionMessageContentTextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatCompletionMessageContentThinkingPart(BaseModel):
    type: Literal["thinking", "reasoning"]
    thinking: Optional[str] = None
    text: Optional[str] = None

    @model_validator(mode="after")
    def validate_payload(self):
        if (self.thinking is None) == (self.text is None):
            raise ValueError("thinking parts require exactly one of 'thinking' or 'text'")
        return self


class ChatCompletionMessageContentImageURL(BaseModel):
    url: str
    detail: Optional[Literal["auto", "low", "high"]] = "auto"
    max_dynamic_patch: Optional[int] = None
    min_dynamic_patch: Optional[int] = None
    max_long_side_pixel: Optional[int] = None
    content_hash: Optional[str] = None  # SGLang parses it further; the simulator refuses media anyway

    @field_validator("detail", mode="before")
    @classmethod
    def _default_detail_is_auto(cls, value: Any) -> Any:
        return "auto" if value == "default" else value


class ChatCompletionMessageContentVideoURL(BaseModel):
    url: str
    max_dynamic_patch: Optional[int] = None
    min_dynamic_patch: Optional[int] = None
    fps: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)
    max_frames: Optional[int] = Field(default=None, gt=0)
    max_tokens_per_frame: Optional[int] = Field(default=None, gt=0)
    max_image_tokens: Optional[int] = Field(default=None, gt=0)
    max_long_side_pixel: Optional[int] = None


class ChatCompletionMessageContentAudioURL(BaseModel):
    url: str


class ChatCompletionMessageContentImagePart(BaseModel):
    type: Literal["image_url"]
    image_url: ChatCompletionMessageContentImageURL
    modalities: Optional[Literal["image", "multi-images", "video"]] = "image"


class ChatCompletionMessageContentVideoPart(BaseModel):
    type: Literal["video_url"]
    video_url: ChatCompletionMessageContentVideoURL


class ChatCompletionMessageContentInputAudio(BaseModel):
    data: str
    format: Literal["wav", "mp3"]


class ChatCompletionMessageContentAudioURLPart(BaseModel):
    type: Literal["audio_url"]
    audio_url: ChatCompletionMessageContentAudioURL


class ChatCompletionMessageContentAudioInlinePart(BaseModel):
    type: Literal["input_audio"]
    input_audio: ChatCompletionMessageContentInputAudio


def _to_audio_url_part(part):
    # protocol.py _to_audio_url_part: inline audio becomes an audio_url part as it validates
    if isinstance(part, ChatCompletionMessageContentAudioURLPart):
        return part
    return ChatCompletionMessageContentAudioURLPart(
        type="audio_url", audio_url=ChatCompletionMessageContentAudioURL(url="data:audio"))


ChatCompletionMessageContentAudioPart = Annotated[
    Union[ChatCompletionMessageContentAudioURLPart, ChatCompletionMessageContentAudioInlinePart],
    AfterValidator(_to_audio_url_part),
]


class ChatCompletionMessageContentToolReferenceBlock(BaseModel):
    type: Literal["tool_reference"]
    name: str


ChatCompletionMessageContentPart = Union[
    ChatCompletionMessageContentTextPart,
    ChatCompletionMessageContentThinkingPart,
    ChatCompletionMessageContentImagePart,
    ChatCompletionMessageContentVideoPart,
    ChatCompletionMessageContentAudioPart,
    ChatCompletionMessageContentToolReferenceBlock,
]
#: serving_chat.py line 150: what a text-only model refuses
MEDIA_PART_TYPES = frozenset({"image_url", "video_url", "audio_url"})

_GenericMessageRole = Literal["system", "assistant", "tool", "function", "developer", "latest_reminder", "root"]
_GENERIC_MESSAGE_ROLES = get_args(_GenericMessageRole)


class ChatCompletionMessageGenericParam(BaseModel):
    """protocol.py lines 754-787 (the fields the simulator reads; the rest are ignored here)."""

    role: _GenericMessageRole
    content: Union[str, List[ChatCompletionMessageContentPart], None] = Field(default=None)
    tool_call_id: Optional[str] = None
    name: Optional[str] = None
    reasoning_content: Optional[str] = None

    @field_validator("role", mode="before")
    @classmethod
    def _normalize_role(cls, v):
        if isinstance(v, str):
            v_lower = v.lower()
            if v_lower not in _GENERIC_MESSAGE_ROLES:
                allowed = ", ".join(repr(r) for r in _GENERIC_MESSAGE_ROLES)
                raise ValueError(f"'role' must be one of {allowed} (case-insensitive).")
            return v_lower
        raise ValueError("'role' must be a string")

    @model_validator(mode="after")
    def validate_thinking_parts_role(self):
        if self.role != "assistant" and isinstance(self.content, list):
            for part in self.content:
                if isinstance(part, ChatCompletionMessageContentThinkingPart):
                    raise ValueError("thinking content parts are only valid in assistant messages")
        return self


class ChatCompletionMessageUserParam(BaseModel):
    """protocol.py lines 790-802."""

    role: Literal["user"]
    content: Union[str, List[ChatCompletionMessageContentPart]]

    @model_validator(mode="after")
    def validate_thinking_parts_role(self):
        if isinstance(self.content, list):
            for part in self.content:
                if isinstance(part, ChatCompletionMessageContentThinkingPart):
                    raise ValueError("thinking content parts are only valid in assistant messages")
        return self


ChatCompletionMessageParam = Union[ChatCompletionMessageGenericParam, ChatCompletionMessageUserParam]


class ChatCompletionRequest(_OpenAIBase):
    """protocol.py ``ChatCompletionRequest`` (the fields the simulator reads or refuses)."""

    messages: List[ChatCompletionMessageParam]
    logprobs: bool = False
    top_logprobs: Optional[int] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    min_tokens: int = 0
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    tools: Optional[List[Any]] = None


COMPLETION = TypeAdapter(CompletionRequest)
CHAT = TypeAdapter(ChatCompletionRequest)
