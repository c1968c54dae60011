"""What SGLang reads from a model's ``config.json`` that its speculative rules depend on.

SGLang decides a model's attention kind from the ``architectures`` list, not from the presence of
``kv_lora_rank`` alone (``python/sglang/srt/configs/model_config.py``, ``ModelConfig.__init__``: the
"temporary special judge for MLA architecture" list, plus a few architectures that are MLA only
when they carry ``kv_lora_rank``). The MLA kind matters twice for EAGLE: which attention backend
SGLang picks by default (``arg_groups/model_override_base.py``, ``get_default_attn_backend``), and
which backends can verify or draft a tree (``tuner.sglang.attention``).

The draft model is read the same way: SGLang builds the draft's ``ModelConfig`` from
``--speculative-draft-model-path`` (``is_draft_model=True``), so a Llama-style EAGLE-3 head
(``LlamaForCausalLMEagle3``) is MHA even for an MLA target, while ``Eagle3DeepseekV2ForCausalLM``
is MLA.

Reading is offline and never downloads: a local model folder, or the Hugging Face cache
(``HF_HUB_CACHE``, ``HF_HOME/hub``, ``~/.cache/huggingface/hub``:
``models--ORG--NAME/snapshots/COMMIT/config.json``, the commit ``refs/main`` or the revision names). Nothing found is ``None``, never an error; a
``config.json`` that is not JSON is a :class:`ValueError` naming the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .home import home_folder

#: model_config.py, ModelConfig.__init__: architectures SGLang runs with MLA attention whatever the
#: config holds (the first branch of the MLA judge, and the Kimi/MiniCPM3/Sarvam/Bailing-V3 ones).
MLA_ARCHITECTURES = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM",
    "DeepseekV3ForCausalLMNextN", "Glm4MoeLiteForCausalLM", "Glm4MoeLiteForCausalLMNextN",
    "GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGeneration",
    "Glm5NextForConditionalGenerationNextN", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN",
    "HYV4ForCausalLM", "HYV4ForCausalLMNextN", "DotsVLMForCausalLM", "Dots3NoteForCausalLM",
    "Dots3NoteForCausalLMNextN", "MistralLarge3ForCausalLM", "MistralLarge3ForCausalLMEagle",
    "KimiK25ForConditionalGeneration", "Eagle3DeepseekV2ForCausalLM", "GigaChat35ForCausalLM",
    "GigaChat35ForCausalLMNextN", "MiniCPM3ForCausalLM", "KimiVLForConditionalGeneration",
    "KimiLinearForCausalLM", "KimiK3LinearForCausalLM", "KimiK3ForConditionalGeneration",
    "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration",
    "SarvamMLAForCausalLM",
})
#: model_config.py: MLA only when the (text) config has ``kv_lora_rank``.
MLA_IF_KV_LORA_RANK = frozenset({"PixtralForConditionalGeneration", "BailingMoeForCausalLMNextN"})
#: model_config.py: DeepseekVL2 is MLA unless its text config says ``use_mla: false``.
MLA_UNLESS_USE_MLA_FALSE = frozenset({"DeepseekVL2ForCausalLM"})

#: model_config.py, ``is_deepseek_dsa``: these architectures run DeepSeek sparse attention when the
#: config has ``index_topk`` (DeepSeek V3.2, GLM-5); SGLang then picks the ``dsa`` backend itself.
DSA_ARCHITECTURES = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGenerationNextN",
    "Glm5NextForConditionalGeneration", "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN",
    "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
})

#: arg_groups/model_overrides/deepseek_v2.py, ``_deepseek_family_overrides``: without DSA, these
#: architectures get ``attention_backend=trtllm_mla`` on SM100 when no backend is set.
DEEPSEEK_FAMILY = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
    "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
})

#: model_config.py, ``SWA_SINK_ARCHS``: architectures with learned attention sinks, which SGLang keeps
#: off FlashInfer (``get_default_attn_backend``: "FlashInfer does not support attention sinks").
SWA_SINK_ARCHS = frozenset({"GptOssForCausalLM", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
                            "IQuestQ1ForCausalLM", "IQuestQ1MTP"})
#: model_config.py: MiMoV2 has sinks only when its config sets a sink-bias flag.
MIMO_V2_ARCHS = frozenset({"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP"})

#: Architectures on SGLang's generic attention path whose model runner gets a sliding window
#: (``model_executor/model_runner_components/load_model_utils.py``, ``resolve_sliding_window_size``:
#: the model's ``get_attention_sliding_window_size``, ``config.sliding_window - 1`` in ``gpt_oss.py``,
#: ``gemma2.py``, ``gemma3_causal.py``, ``gemma3_mm.py``, ``gemma3n_causal.py``, ``gemma3n_mm.py``;
#: else a hybrid-SWA model's ``sliding_window`` (``model_config.py``, ``is_hybrid_swa_model``: Granite
#: SWA); else ``attention_chunk_size``, which Llama 4 sets). Every released config of them has the
#: window, so the architecture decides it. The attention backends read it (``has_swa``).
SLIDING_WINDOW_ARCHS = frozenset({
    "GptOssForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
    "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
    "Llama4ForConditionalGeneration", "Llama4ForCausalLM",
})

#: Architectures whose linear-attention layers run SGLang's Lightning (seg_la) backend, which refuses
#: every draft tree: ``layers/attention/linear/lightning_backend.py`` line 88 raises NotImplementedError
#: for topk > 1 as the target's model runner builds its attention backend, whatever the attention
#: backend (``attention_registry.py`` line 549: ``configs/hybrid_arch.py``, ``hybrid_lightning_config``,
#: a ``BailingHybridConfig``, config.json ``model_type: bailing_hybrid``, without ``short_conv_kernel_size``,
#: whose presence makes it Ling-V3's KDA). BailingMoeV2_5ForCausalLM (Ling/Ring 2.5,
#: ``models/bailing_moe_linear.py``) builds lightning layers (``BailingMoELinearAttention``) only, and
#: SGLang runs it only with that config (nothing else gives its linear layers a backend), so the
#: architecture decides it. Not here: MiniCPM-SALA (``model_type: minicpm_sala``), lightning only when its
#: ``mixer_types`` say so.
LIGHTNING_ARCHS = frozenset({"BailingMoeV2_5ForCausalLM"})

ATTENTION_KINDS = ("mla", "mha")


@dataclass(frozen=True)
class ModelFacts:
    """What the rules need to know about one model (the target or the draft).

    ``architecture`` is ``architectures[0]`` (what SGLang's per-model choices key on);
    ``attention`` is ``"mla"`` or ``"mha"`` (every non-MLA kind: MHA, GQA, MQA); ``source`` says
    where the facts came from (a config.json path, a study key, a simulator profile).
    """

    architecture: str | None
    attention: str
    source: str
    dsa: bool = False
    #: the config's own sink flags (``learnable_sink``, MiMoV2's sink biases); see :attr:`attention_sinks`
    sink_flags: bool = False
    #: K and V rows of different widths (``ModelConfig.has_asymmetric_kv``: head_dim != v_head_dim,
    #: or swa_head_dim != swa_v_head_dim), non-MLA models only: SGLang gives them fa4, not trtllm_mha
    asymmetric_kv: bool = False

    @property
    def mla(self) -> bool:
        return self.attention == "mla"

    @property
    def attention_sinks(self) -> bool:
        """Learned attention sinks (``ModelConfig._detect_attention_sinks``): by architecture, or
        by the config's flags."""
        return self.architecture in SWA_SINK_ARCHS or self.sink_flags

    @property
    def sliding_window(self) -> bool:
        """Whether SGLang's model runner has a sliding window for it (:data:`SLIDING_WINDOW_ARCHS`)."""
        return self.architecture in SLIDING_WINDOW_ARCHS

    @property
    def lightning(self) -> bool:
        """Whether SGLang runs its linear layers on the Lightning backend, which verifies chains only
        (:data:`LIGHTNING_ARCHS`)."""
        return self.architecture in LIGHTNING_ARCHS

    def describe(self) -> str:
        arch = f"{self.architecture}, " if self.architecture else ""
        return f"{arch}{self.attention.upper()} attention ({self.source})"


def _text_config(config: dict, archs: list[str]) -> dict:
    """The config SGLang reads the text model's fields from (``hf_text_config``:
    hf_transformers/common.py, ``get_hf_text_config``): the nested ``thinker_config`` (its
    ``text_config``), ``llm_config``, ``language_config`` or ``text_config``, in that order of
    precedence, of multimodal models (Kimi K2.5 keeps ``kv_lora_rank`` in ``text_config``, DeepSeek-VL2
    its ``use_mla`` in ``language_config``); the config itself for a ``Llava*ForCausalLM`` and a text
    model.

    QA (qa193): only ``text_config`` was read: the ``use_mla: false`` of deepseek-vl2-tiny's
    ``language_config`` went unseen, and the model, of SGLang's architecture, was judged MLA where
    SGLang runs it MHA."""
    if archs and archs[0].startswith("Llava") and archs[0].endswith("ForCausalLM"):
        return config
    thinker = config.get("thinker_config")
    if isinstance(thinker, dict):
        text = thinker.get("text_config")
        return text if isinstance(text, dict) else thinker
    for key in ("llm_config", "language_config", "text_config"):
        if isinstance(config.get(key), dict):
            return config[key]
    return config


#: hf_transformers/config.py, ``_LONGCAT_ARCHS``: loaded as SGLang's ``LongcatFlashConfig``, whose
#: ``architectures`` the parser then sets to ``["LongcatFlashForCausalLM"]``.
LONGCAT_ARCHS = frozenset({"LongcatCausalLM", "LongcatFlashForCausalLM", "LongcatFlashNgramForCausalLM"})
#: hf_transformers/common.py, ``_is_deepseek_ocr_model`` / ``_is_deepseek_ocr2_model``: the
#: ``auto_map`` entries that make a ``deepseek_vl_v2`` config DeepSeek-OCR.
DEEPSEEK_OCR_AUTO_MODELS = frozenset({"modeling_deepseekocr.DeepseekOCRForCausalLM",
                                      "modeling_deepseekocr2.DeepseekOCR2ForCausalLM"})


def sglang_architectures(config: dict) -> list[str]:
    """The ``architectures`` SGLang's config parser gives a parsed ``config.json``
    (hf_transformers/config.py, ``HfModelConfigParser.parse``), where it replaces the file's own:

    * a Longcat architecture (``LongcatCausalLM``, ``LongcatFlashNgramForCausalLM``) is
      ``LongcatFlashForCausalLM`` (MLA);
    * ``model_type: deepseek_vl_v2`` (DeepSeek-VL2, whose config.json has no ``architectures`` at all)
      is ``DeepseekVL2ForCausalLM`` (configs/deepseekvl2.py sets it), or ``DeepseekOCRForCausalLM``
      for DeepSeek-OCR (its ``auto_map``).

    QA (qa193): deepseek-vl2 and deepseek-vl2-small (``language_config.use_mla`` true,
    ``kv_lora_rank`` 512) were read as MHA of no architecture, where SGLang runs them MLA."""
    archs = [a for a in (config.get("architectures") or []) if isinstance(a, str)]
    if any(a in LONGCAT_ARCHS for a in archs):
        return ["LongcatFlashForCausalLM"]
    if config.get("model_type") == "deepseek_vl_v2":
        auto_map = config.get("auto_map")
        auto = auto_map.get("AutoModel") if isinstance(auto_map, dict) else None
        return ["DeepseekOCRForCausalLM" if auto in DEEPSEEK_OCR_AUTO_MODELS else "DeepseekVL2ForCausalLM"]
    return archs


def facts_from_config(config: dict, source: str) -> ModelFacts:
    """:class:`ModelFacts` of a parsed ``config.json``, by SGLang's MLA judge (model_config.py), of
    the architectures and text config SGLang's config parser makes of it."""
    archs = sglang_architectures(config)
    text = _text_config(config, archs)
    has_rank = text.get("kv_lora_rank") is not None or config.get("kv_lora_rank") is not None
    mla = any(
        a in MLA_ARCHITECTURES
        or (a in MLA_IF_KV_LORA_RANK and has_rank)
        or (a in MLA_UNLESS_USE_MLA_FALSE and text.get("use_mla", True))
        for a in archs)
    arch = archs[0] if archs else None
    dsa = arch in DSA_ARCHITECTURES and (text.get("index_topk") is not None
                                         or config.get("index_topk") is not None)
    if any(a in MIMO_V2_ARCHS for a in archs):
        sinks = bool(text.get("add_swa_attention_sink_bias") or text.get("add_full_attention_sink_bias"))
    else:
        sinks = bool(text.get("learnable_sink"))
    return ModelFacts(arch, "mla" if mla else "mha", source, dsa, sinks, not mla and _asymmetric_kv(text))


def _asymmetric_kv(text: dict) -> bool:
    """model_config.py, ``ModelConfig.__init__`` (the head dims, before the MLA special cases) and
    ``has_asymmetric_kv``: head_dim defaults to hidden_size // num_attention_heads, v_head_dim (None
    or 0) and swa_head_dim to head_dim, swa_v_head_dim to swa_head_dim."""
    head = text.get("head_dim")
    if head is None:
        hidden, heads = text.get("hidden_size"), text.get("num_attention_heads")
        head = hidden // heads if isinstance(hidden, int) and isinstance(heads, int) and heads else None
    v_head = text.get("v_head_dim") or head
    swa = head if text.get("swa_head_dim") is None else text.get("swa_head_dim")
    swa_v = swa if text.get("swa_v_head_dim") is None else text.get("swa_v_head_dim")
    return head != v_head or swa != swa_v


def hf_cache_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """The Hugging Face hub cache folder huggingface_hub uses (one, or none), for a server started with
    ``env`` (its ``server.env``, laid over this process's environment, which the server inherits): the
    first set of ``HF_HUB_CACHE``, ``HUGGINGFACE_HUB_CACHE``, ``HF_HOME/hub``,
    ``XDG_CACHE_HOME/huggingface/hub``, ``~/.cache/huggingface/hub``. With no
    home folder to be had (``HOME`` unset and this user's id in no passwd entry: a container run as
    ``-u 1234``, a Kubernetes ``runAsUser``) there is no ``~/.cache`` to look in, and the folders
    the variables name are all.

    As huggingface_hub reads them (constants.py): the legacy ``HUGGINGFACE_HUB_CACHE`` too, and each
    value with ``~`` and ``$VAR`` expanded. QA (qa167): with ``HUGGINGFACE_HUB_CACHE=/data/hub`` (as
    older containers set it), or ``HF_HUB_CACHE='$SCRATCH/hub'`` from an env file, the server found
    the model where ``tuner doctor`` said ``no config.json ... download the model first``, and an
    MLA model of unknown attention was pinned flashinfer; so did ``server.env: {HF_HUB_CACHE: ...}``,
    where the server looks, which the lookup did not read."""
    environ = {**os.environ, **{k: str(v) for k, v in (env or {}).items()}}

    def expanded(value: str) -> Path:
        return Path(os.path.expandvars(os.path.expanduser(value)))

    # One folder, the first of these set, as huggingface_hub's constants.py picks HF_HUB_CACHE: the
    # server looks nowhere else. QA (qa193): with HF_HUB_CACHE=/scratch/hub (the server's, without the
    # model) and the model in ~/.cache/huggingface/hub, ``tuner doctor`` said the model files were
    # there and read their facts, where the server (HF_HUB_OFFLINE=1) found no model or downloaded it.
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if environ.get(var):
            return [expanded(environ[var])]
    if environ.get("HF_HOME"):
        return [expanded(environ["HF_HOME"]) / "hub"]
    home = home_folder()
    xdg = environ.get("XDG_CACHE_HOME")
    cache = expanded(xdg) if xdg else (home and home / ".cache")
    if not cache:  # QA (qa157): study create and doctor of an SGLang study ended in Path.home()'s traceback
        return []
    return [cache / "huggingface" / "hub"]


def find_config_json(model_path: str, env: Mapping[str, str] | None = None,
                     revision: str | None = None) -> Path | None:
    """The ``config.json`` of ``model_path`` on this machine: a local folder, or a Hugging Face repo
    id (``ORG/NAME``) in the local hub cache (:func:`hf_cache_dirs` of ``env``), in the snapshot of
    ``revision`` (SGLang's ``--revision``: a branch, a tag or a commit hash; None: ``main``).
    None when neither has it, also for a path this user cannot look into: pathlib's ``is_dir``
    raises there (EACCES, a name too long), where the facts are then the study's ``server.facts``
    (QA: ``export`` of a study an older tuner made, by a user who may not enter the model's folder,
    was a PermissionError traceback)."""
    local = Path(os.path.expanduser(model_path))
    try:
        if local.is_dir():
            path = local / "config.json"
            return path if path.is_file() else None
        if local.is_file() and local.name == "config.json":
            return local
    except OSError:
        return None
    if model_path.count("/") != 1 or model_path.startswith(("/", ".")):
        return None
    folder = "models--" + model_path.replace("/", "--")
    for cache in hf_cache_dirs(env):
        found = _cached_config(cache / folder, revision)
        if found is not None:
            return found
    return None


def _cached_config(repo: Path, revision: str | None) -> Path | None:
    """``config.json`` of ``revision`` in one repo's hub-cache folder, as huggingface_hub resolves it
    offline (file_download.py, ``try_to_load_from_cache``, which transformers' ``AutoConfig`` and so
    SGLang's ``get_config`` go through): ``refs/<revision>`` names the snapshot's commit (``main``
    when no revision is given), else the revision is the commit itself. A cache with no ``refs``
    folder at all (copied by hand, not by the hub) gives its newest snapshot.

    QA (qa193): the newest snapshot by mtime was taken whatever ``refs/main`` named: a repo whose
    cache held an MLA snapshot fetched last (``revision=`` a test branch) and an MHA ``main`` was read
    as MLA, where the server loads ``main``."""
    snapshots = repo / "snapshots"
    try:
        refs = repo / "refs"
        if refs.is_dir():
            name = revision or "main"
            ref = refs / name
            commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else name
            if not commit or "/" in commit or commit in (".", ".."):
                return None
            path = snapshots / commit / "config.json"
            return path if path.is_file() else None
        if revision:
            path = snapshots / revision / "config.json"
            return path if "/" not in revision and path.is_file() else None
        found = sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    return found[0] if found else None


def read_model_facts(model_path: str, env: Mapping[str, str] | None = None,
                     revision: str | None = None) -> ModelFacts | None:
    """The facts of the model at ``model_path`` from its ``config.json`` (offline; :func:`find_config_json`
    with ``env``, the server's ``server.env``, and ``revision``, its ``--revision``), or None."""
    path = find_config_json(model_path, env, revision)
    if path is None:
        return None
    try:
        # UTF-8 whatever the locale, as transformers reads it (configuration_utils.py, encoding="utf-8"):
        # QA (qa167): under LC_ALL=C PYTHONUTF8=0 a config.json with an em dash in a comment was "not a
        # readable JSON config ... repair or download it again", and study create refused the model
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable JSON config: {exc}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: not a JSON object")
    return facts_from_config(config, str(path))
