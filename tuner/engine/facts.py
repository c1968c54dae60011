"""What the study's servers run on: the model's and draft's attention kind and the GPU generation,
and from them the attention backend every launch of the study uses and the space it can search.

Where facts come from, first found wins:

* ``server.backend: sglang``: the target's and draft's ``config.json`` (a local folder or the
  Hugging Face cache, offline: :func:`tuner.sglang.model.read_model_facts`) and the GPUs' compute
  capability from ``nvidia-smi`` (:func:`tuner.server.gpus.gpu_inventory`);
* ``server.backend: sim``: the simulator profile, which states what a ``config.json`` and
  ``nvidia-smi`` would say (the simulated server reads the very same profile); ``server.backend:
  model`` likewise its profile, and nothing for a landscape table (a table lists what ran);
* the study's ``server.facts`` keys, for what neither can tell. A stated fact that contradicts a
  read one is reported (``StudyFacts.conflicts``; ``tuner doctor`` fails on it) and the read fact
  is used.

The attention backend (:func:`tuner.sglang.attention.choose_attention_backend`) is decided once,
when the study is created, and stored with it (:data:`ATTENTION_ATTR`): every worker launches the
same backend, and a worker whose own facts pick another is refused (``ConfigError``) rather than
mixing backends in one study. With a backend that cannot run trees the study's space keeps topk 1
only (:func:`space_for`), and one line says so.

Nothing here raises for missing facts (they are ``None``); an unreadable ``config.json`` or a
broken simulator profile is a ``ConfigError`` naming the file. A reader of a stored study that
launches nothing (``tuner study export``) may pass ``unreadable`` instead: the broken file is then
said there, and its facts are the study's ``server.facts``, as for a file not found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..config.space import SearchSpace, SearchSpaceConfig, context_from_args
from ..config.study import ServerSettings, StudyConfig
from ..config.yamlfile import ConfigError
from ..sglang.attention import AttentionChoice, choose_attention_backend, runs_trees
from ..sglang.hardware import GpuArch
from ..sglang.model import ModelFacts, read_model_facts

#: The page size SGLang gives a DSA model on CUDA GPUs (``64 * index_kpool``; the least of it).
DSA_PAGE_SIZE = 64

#: The study attribute holding the attention decision (see :func:`attention_record`).
ATTENTION_ATTR = "tuner_attention"


@dataclass(frozen=True)
class StudyFacts:
    """The target's and draft's facts and the GPU generation (None: not known here)."""

    target: ModelFacts | None
    draft: ModelFacts | None
    gpu: GpuArch | None
    conflicts: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        out = [f"model: {self.target.describe() if self.target else 'unknown'}",
               f"draft: {self.draft.describe() if self.draft else 'unknown'}",
               f"GPUs: {f'{self.gpu.name}, compute capability {self.gpu} ({self.gpu.source})' if self.gpu else 'unknown'}"]
        return out + [f"conflict: {c}" for c in self.conflicts]


#: What the study's ``server.facts`` states for a fact read from a model path's ``config.json``.
_STATED_FOR = {"server.model_path": "model_attention", "server.draft_model_path": "draft_attention"}


def _read(path: str | None, key: str, unread: list[tuple[str, str]] | None,
          env: dict | None = None, revision: object = None) -> ModelFacts | None:
    """The facts of ``path``'s ``config.json`` (of ``revision``, the server's ``--revision``, in the
    Hugging Face cache); one that is there but cannot be read is a ConfigError, or with ``unread`` (a
    reader that launches nothing) noted there and unknown."""
    if not path:
        return None
    try:
        # the Hugging Face cache the server looks in (server.env's), the snapshot it loads
        return read_model_facts(path, env, revision if isinstance(revision, str) and revision else None)
    except ValueError as exc:
        if unread is None:
            raise ConfigError("study", key, f"{exc}; repair or download it again (the server reads it at "
                                            f"launch too)") from None
        unread.append((key, str(exc)))
        return None


def _stated_model(kind: str | None, key: str) -> ModelFacts | None:
    return ModelFacts(None, kind, f"study key {key}") if kind else None


def _merge(read, stated, what: str, same, conflicts: list[str]):
    if read is not None and stated is not None and not same(read, stated):
        conflicts.append(f"{what}: {stated.source} says {_value(stated)} but {read.source} says {_value(read)}")
    return read if read is not None else stated


def _value(facts) -> str:
    return str(facts) if isinstance(facts, GpuArch) else facts.attention


def _server_gpu_arch(server: ServerSettings, gpus: list[dict] | None) -> GpuArch | None:
    """The generation of the first GPU CUDA shows ``server`` (its CUDA_VISIBLE_DEVICES as CUDA reads
    it, :func:`tuner.server.gpus.cuda_visible`; unset: the node's GPU 0), of ``gpus`` (the node's, by
    nvidia-smi index: :func:`tuner.server.gpus.gpu_inventory`). SGLang's argument checks ask that one
    (server_args.py: ``is_sm90_supported()``, ``is_sm100_supported()`` read
    ``torch.cuda.get_device_capability()``, the current device, 0). Where the entry's index cannot be
    told (a MIG id, a UUID nvidia-smi does not place), the node's one generation, or None on a node
    mixing generations. QA (qa167): the node's GPU 0 was read whatever the server was shown: an MLA
    study on GPU 1, an H100, of a node whose GPU 0 is an A100, was pinned triton for "sm80"."""
    if not gpus:
        return None
    from ..server.gpu_lock import visible_gpus
    from ..server.gpus import cuda_visible, numbered_as_listed

    visible = visible_gpus(server.env)
    first: str | None = "0"
    if visible is not None:
        shown, _ = cuda_visible(visible, len(gpus))
        first = shown[0] if shown else None
    caps = {g["compute_cap"] for g in gpus}
    by_index = visible is None or (bool(visible) and visible[0].isdecimal() and visible[0].isascii())
    if by_index and len(caps) > 1 and not numbered_as_listed(server.env):
        # CUDA's default order (FASTEST_FIRST) need not be nvidia-smi's (QA, qa174: on an A100 (GPU 0)
        # + H100 node, CUDA's device 0 is the H100): an index names no known GPU here
        return None
    if first is not None:
        cap = gpus[int(first)]["compute_cap"]
    elif len(caps) == 1:
        cap = caps.pop()
    else:
        return None
    return GpuArch.parse(cap, "nvidia-smi")


def gather_facts(server: ServerSettings, unreadable: Callable[[str], None] | None = None) -> StudyFacts:
    """The facts of ``server``'s model, draft and GPUs on this machine (see the module doc).
    ``unreadable``: hears one line per ``config.json`` that is there but cannot be read (``KEY:
    FILE: why; what is used instead``), whose facts are then the study's ``server.facts``; without
    it such a file is a :class:`ConfigError` (``study: KEY: ...``; the caller names the study)."""
    unread: list[tuple[str, str]] | None = None if unreadable is None else []
    profile_name = server.sim.profile if server.backend == "sim" else (
        server.model.profile if server.backend == "model" and server.model is not None else None)
    if profile_name is not None:
        from ..sim.profile import load_profile

        profile = load_profile(profile_name)
        target, draft, gpu = profile.target_facts(), profile.draft_facts(), profile.gpu()
    elif server.backend == "model":  # a landscape table: its rows are what ran
        target = draft = gpu = None
    else:
        from ..server.gpus import gpu_inventory

        # SGLang loads the target at --revision and the draft at --speculative-draft-model-revision
        # (server_args.py; None: main), from server.args or server.extra_args (QA, qa193: a study on
        # --revision v2, an MLA config, was judged by main's MHA one)
        given = server.with_extra_args()
        target = _read(server.model_path, "server.model_path", unread, server.env, given.get("revision"))
        draft = _read(server.draft_model_path, "server.draft_model_path", unread, server.env,
                      given.get("speculative_draft_model_revision"))
        gpu = _server_gpu_arch(server, gpu_inventory())
    stated = server.facts
    conflicts: list[str] = []
    target = _merge(target, _stated_model(stated.model_attention, "server.facts.model_attention"),
                    "model attention", lambda a, b: a.attention == b.attention, conflicts)
    draft = _merge(draft, _stated_model(stated.draft_attention, "server.facts.draft_attention"),
                   "draft attention", lambda a, b: a.attention == b.attention, conflicts)
    stated_gpu = (GpuArch.parse(stated.gpu_compute_capability, "study key server.facts.gpu_compute_capability")
                  if stated.gpu_compute_capability else None)
    gpu = _merge(gpu, stated_gpu, "GPU compute capability", lambda a, b: (a.major, a.minor) == (b.major, b.minor),
                 conflicts)
    for key, problem in unread or ():
        name = _STATED_FOR[key]
        value = getattr(stated, name)
        unreadable(f"{key}: {problem}; " + (f"judged by the study's server.facts.{name} ({value}) instead"
                                            if value else f"unknown here (the study states no "
                                                          f"server.facts.{name})"))
    return StudyFacts(target, draft, gpu, tuple(conflicts))


def study_server_args(server: ServerSettings, fixed_args: dict | None) -> dict[str, Any]:
    """The study's own server arguments, as every launch's command line gives them to SGLang: the
    space's fixed args, ``server.args``, and what ``server.extra_args`` sets (appended last; read as
    SGLang's argparse reads it, :func:`tuner.config.extra_args.extra_args_given`). The rules judge
    settings with them (QA: ``extra_args: [--page-size, "16"]`` on a hybrid model was created and
    every launch failed, ``--disable-radix-cache`` there was not seen, and a study was refused)."""
    from ..server.command import merged_server_args

    # merged_server_args refuses extra_args that set an argument args or fixed set: no key is both
    return server.with_extra_args(merged_server_args(server, fixed_args))


def choose_attention(config: StudyConfig, fixed_args: dict | None, facts: StudyFacts) -> AttentionChoice:
    """The study's backend: its own (``server.args``, ``fixed``, ``extra_args``), else the pin. Of
    split prefill and decode backends, the one the target verifies trees on
    (:attr:`ServerContext.verify_backend`), deprecated names as SGLang renames them."""
    args = study_server_args(config.server, fixed_args)
    user = context_from_args("EAGLE3", args).verify_backend
    return choose_attention_backend(facts.target, facts.gpu, user, int(args.get("page_size") or 1), facts.draft)


def attention_record(choice: AttentionChoice, facts: StudyFacts) -> dict:
    """What the study stores (:data:`ATTENTION_ATTR`): the decision and the facts behind it."""
    return {"backend": choice.backend, "pinned": choice.pinned, "trees": choice.trees,
            "reason": choice.reason,
            "target_attention": facts.target.attention if facts.target else None,
            "target_architecture": facts.target.architecture if facts.target else None,
            "target_dsa": bool(facts.target and facts.target.dsa),
            "draft_attention": facts.draft.attention if facts.draft else None,
            "gpu": str(facts.gpu) if facts.gpu else None}


def choice_from_record(record: dict) -> AttentionChoice:
    return AttentionChoice(record.get("backend"), bool(record.get("pinned")), record.get("trees"),
                           record.get("reason") or "")


def space_for(space: SearchSpace, config: StudyConfig, record: dict | None,
              unreadable: Callable[[str], None] | None = None) -> tuple[SearchSpace, str | None]:
    """``space`` with the rules' full context (fixed args, ``server.args``, the attention pin and
    the model facts) and, when the backend cannot run trees, without them; plus that one line.

    ``record`` None (a study created before the decision was stored): the backend its launches
    have always run (:func:`older_study_record`), judged by the rules, with the trees kept in the
    space: its trials were asked with them, and Optuna refuses another choice list for a parameter
    (``CategoricalDistribution does not support dynamic value space``), so a tree it cannot run is
    proposed, refused by the rules (invalid, never launched) and steers the sampler away. Raises
    ConfigError when the backend runs chains only and the space has no topk 1. ``unreadable``: as
    :func:`gather_facts`'s, for the facts an older study's record is judged with.
    """
    older = record is None
    if older:
        record = older_study_record(config, space, unreadable)
    choice = choice_from_record(record)
    args = study_server_args(config.server, space.config.fixed)
    if choice.pinned and choice.backend:
        args["attention_backend"] = choice.backend
    if record.get("target_dsa"):
        # deepseek_v2.py: on CUDA GPUs SGLang sets a DSA model's page size to 64 x its index pool,
        # over any the study gives; the rules judge trees with it (speculative_hook.py).
        args["page_size"] = DSA_PAGE_SIZE
    ctx = context_from_args(space.config.algorithm, args, record.get("target_attention"),
                            record.get("draft_attention"), record.get("target_architecture"))
    out = space.with_context(ctx, choice)
    if older or choice.trees is not False or max(space.values("speculative_eagle_topk")) <= 1:
        return out, None
    if 1 not in space.values("speculative_eagle_topk"):
        raise ConfigError(space.source, "params.speculative_eagle_topk",
                          f"{choice.named} runs chains only (topk 1) for this model, and "
                          f"the space has no topk 1; add 1 to the choices or set another attention_backend")
    return out.without_trees(), (f"search space without trees: {choice.named} runs "
                                 f"topk 1 only for this model ({choice.reason}); topk is held at 1")


def older_study_record(config: StudyConfig, space: SearchSpace,
                       unreadable: Callable[[str], None] | None = None) -> dict:
    """The attention record of a study created before the decision was stored (:data:`ATTENTION_ATTR`;
    a tuner before 2026-12-01): its launches ran the study's own backend, else the launcher's pin,
    :data:`tuner.server.command.DEFAULT_ATTENTION_BACKEND` (flashinfer), as they still do; whether
    that backend runs trees is judged with this node's facts. Without it the rules knew nothing of
    the model, and such a study proposed trees SGLang cannot run (QA: an MLA study of that tuner,
    continued, launched steps=2 topk=2 on flashinfer: `Currently Flashinfer MLA only supports
    topk=1`, after the model's load on a GPU node). ``unreadable``: as :func:`gather_facts`'s."""
    facts = gather_facts(config.server, unreadable)
    args = study_server_args(config.server, space.config.fixed)
    backend, pinned = older_study_backend(config, space.config)
    trees = runs_trees(backend, facts.target, int(args.get("page_size") or 1))
    why = ("the study's own backend" if not pinned else "the tuner's pin when the study was created (before the "
           "attention backend was chosen per model and stored)")
    return attention_record(AttentionChoice(backend, pinned, trees, why), facts)


def older_study_backend(config: StudyConfig, space_config: SearchSpaceConfig) -> tuple[str, bool]:
    """The attention backend every launch of a study an older tuner made runs, and whether it is the
    launcher's pin: the study's own (``server.args``, the space's ``fixed``, ``extra_args``), else
    :data:`tuner.server.command.DEFAULT_ATTENTION_BACKEND`. No model facts are needed for it."""
    from ..server.command import DEFAULT_ATTENTION_BACKEND

    args = study_server_args(config.server, space_config.fixed)
    user = context_from_args(space_config.algorithm, args).verify_backend
    return user or DEFAULT_ATTENTION_BACKEND, user is None


def prepare(config: StudyConfig, space: SearchSpace) -> tuple[StudyFacts, AttentionChoice, dict]:
    """Facts, attention decision and its record for a study file on this machine."""
    facts = gather_facts(config.server)
    choice = choose_attention(config, space.config.fixed, facts)
    return facts, choice, attention_record(choice, facts)


#: The baseline trial's attribute holding the hardware of the node that measured it
#: (:func:`node_hardware`); a baseline an older tuner stored has none, and judges nothing.
HARDWARE_ATTR = "hardware"
#: How far two nodes' GPU memory may differ and still be the same GPU (``memory.total`` moves with
#: the driver's reserve by a few MiB; another memory size is another GPU model or ECC setting).
MEMORY_TOLERANCE = 0.01


def node_hardware(server: ServerSettings, fixed_args: dict | None) -> dict | None:
    """What this node's servers of the study run on, as the baseline records it and every worker
    compares (:func:`hardware_difference`): ``name``, ``count``, ``memory_total_mib``, ``compute_cap``,
    and ``interconnect`` where nvidia-smi tells it (``NVLink``/``PCIe`` between two or more GPUs).

    * ``server.backend: sglang``: what ``nvidia-smi`` says of the GPUs the server uses
      (:func:`tuner.server.gpus.server_gpu_facts`: the first ``tp_size`` of its CUDA_VISIBLE_DEVICES,
      every one it is shown when the study moves its ranks); None where nvidia-smi cannot tell;
    * ``server.backend: sim``: the simulator profile's GPUs (``hardware``), named by the profile;
    * ``server.backend: model``: None (no server runs; its figures are the profile's or the table's).
    Never raises for an unknown fact (None); a profile that does not load is a ``ConfigError``."""
    if server.backend == "model":
        return None
    if server.backend == "sim":
        from ..sim.profile import load_profile

        profile = load_profile(server.sim.profile)
        hw = profile.hardware
        return {"name": f"simulated ({profile.name})", "count": hw.tp_size,
                "memory_total_mib": int(hw.gpu_memory_gb * 1e9 / 2 ** 20), "compute_cap": hw.compute_capability}
    from ..server.gpu_lock import visible_gpus
    from ..server.gpus import MOVED_GPU_ARGS, numbered_as_listed, server_gpu_facts

    moved = MOVED_GPU_ARGS & set(study_server_args(server, fixed_args))
    return server_gpu_facts(visible_gpus(server.env), None if moved else server.tp_size,
                            numbered=numbered_as_listed(server.env))


def describe_hardware(hw: dict) -> str:
    """``8 x NVIDIA H100 80GB HBM3 (81559 MiB, compute capability 9.0, NVLink)``; a MIG instance's
    facts have no memory: ``1 x NVIDIA A100-SXM4-80GB MIG 1g.10gb (compute capability 8.0)``."""
    link = f", {hw['interconnect']}" if hw.get("interconnect") else ""
    memory = f"{hw['memory_total_mib']} MiB, " if hw.get("memory_total_mib") is not None else ""
    return f"{hw.get('count')} x {hw.get('name')} ({memory}compute capability {hw.get('compute_cap')}{link})"


def hardware_difference(baseline: Any, here: dict | None) -> str | None:
    """The first way this node's hardware (``here``, :func:`node_hardware`) differs from the
    baseline's (its :data:`HARDWARE_ATTR`), as ``"GPU name"``, ``"GPU count"``, ``"GPU memory"``,
    ``"compute capability"`` or ``"interconnect"`` (when both nodes could tell it); None when they
    agree, or when either is unknown: a baseline stored before the facts were (an older tuner's),
    one measured on the model backend, or a node whose nvidia-smi cannot tell (unknown is never an
    error, :mod:`tuner.server.gpus`)."""
    if not isinstance(baseline, dict) or not isinstance(here, dict):
        return None
    if baseline.get("name") != here.get("name"):
        return "GPU name"
    if baseline.get("count") != here.get("count"):
        return "GPU count"
    a, b = baseline.get("memory_total_mib"), here.get("memory_total_mib")
    if isinstance(a, int) and isinstance(b, int) and abs(a - b) > MEMORY_TOLERANCE * max(a, b):
        return "GPU memory"
    if baseline.get("compute_cap") != here.get("compute_cap"):
        return "compute capability"
    # what `nvidia-smi topo -m` says between the server's GPUs; compared when both nodes could tell
    if baseline.get("interconnect") and here.get("interconnect") and baseline["interconnect"] != here["interconnect"]:
        return "interconnect"
    return None
