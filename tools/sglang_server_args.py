"""Extract SGLang's server arguments from its own source: ``tuner/sglang/server_args_0_5_23.json``.

The simulator accepts exactly SGLang's launch flags (abbreviations and ambiguity errors included)
and reports every field of ``ServerArgs.resolved_dict()`` in ``/server_info``. Both come from this
table, which is written by SGLang's own code: this script imports ``sglang.srt.server_args`` from
an unpacked SGLang source tree, builds SGLang's real argparse parser (``prepare_server_args``:
``argparse.ArgumentParser(prog="sglang serve")`` + ``ServerArgs.add_cli_args``) and reads its
actions and the ``ServerArgs`` record's fields and defaults.

SGLang's modules import torch, triton, transformers and CUDA libraries at the top; none of them
is needed to build the parser, so they are replaced by inert stand-ins (``_Stub``) while
importing. Dev-time only; the tuner never runs this. Needs ``msgspec``, ``numpy``, ``psutil``,
``requests``, ``pyyaml``, ``packaging``, ``pybase64``, ``orjson``, ``pydantic``, ``fastapi`` in
the interpreter that runs it.

    python tools/sglang_server_args.py /path/to/sglang/src > tuner/sglang/server_args_0_5_23.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def install_stubs(src: str, keep=()) -> None:
    """Put inert stand-ins for SGLang's heavy dependencies on the import path, except the packages
    in ``keep`` (really installed: benchmarks/sglang_agreement.py keeps torch and transformers)."""
    import importlib.abc, importlib.machinery, sys, types
    STUB = ('torch', 'triton', 'transformers', 'sgl_kernel', 'flashinfer', 'zmq', 'setproctitle', 'uvloop', 'PIL', 'cuda', 'tvm_ffi', 'huggingface_hub', 'safetensors', 'einops', 'numba', 'xgrammar', 'outlines', 'tiktoken', 'sentencepiece', 'torchvision','torchaudio','pynvml','prometheus_client','aiohttp','xxhash','partial_json_parser','openai','anthropic','msgpack','regex','tqdm','scipy','datasets','modelscope','blobfile','gguf','interegular','llguidance','compressed_tensors','filelock','jinja2','soundfile','av','decord','tokenizers','sglang_kernel','tilelang','quack','deep_gemm','deep_ep','flash_mla','cutlass','nvshmem','mistral_common','openai_harmony','timm','kernels','torch_memory_saver','humming_kernels','apache_tvm_ffi','smg_grpc_servicer','grpc','google','IPython','easydict','distro','pycountry','watchfiles','uvicorn','fastapi_','starlette_','dateutil','zstandard','build','ninja','py_spy','nvidia','deepseek_recipe','tml_renderers','torchcodec','flash_attn')
    import abc
    class _M(abc.ABCMeta):
        def __getattr__(cls, name):
            if name.startswith('__') and name.endswith('__'):
                raise AttributeError(name)
            return _mk(name)
        def __getitem__(cls, k): return cls
        def __or__(cls, o): return cls
        def __ror__(cls, o): return cls
        def __iter__(cls): return iter(())
        def __len__(cls): return 0
        def __int__(cls): return 0
        def __index__(cls): return 0
        def __float__(cls): return 0.0
        def __call__(cls, *a, **k):
            if len(a) == 1 and callable(a[0]) and not k and not isinstance(a[0], _M): return a[0]
            return type.__call__(cls, *a, **k)
        def __bool__(cls): return True
        def __lt__(cls, o): return False
        __gt__ = __le__ = __ge__ = __lt__
    def _mk(name):
        return _M(name, (S,), {})
    class S(metaclass=_M):
        def __init__(self, *a, **k): pass
        def __call__(self, *a, **k):
            if len(a) == 1 and callable(a[0]) and not k: return a[0]
            return S()
        def __getattr__(self, name):
            if name.startswith('__') and name.endswith('__'): raise AttributeError(name)
            return _mk(name)
        def __iter__(self): return iter(())
        def __getitem__(self, k): return S()
        def __int__(self): return 0
        def __index__(self): return 0
        def __float__(self): return 0.0
        def __bool__(self): return False
        def __or__(self, o): return self
        __ror__ = __and__ = __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __truediv__ = __or__
        def __lt__(self, o): return False
        __gt__ = __le__ = __ge__ = __lt__
        def __enter__(self): return self
        def __exit__(self, *a): return False
    NOATTR = {'npu', 'xpu', 'hpu', 'musa', 'mlu', 'mtia', 'torch_npu'}
    class StubModule(types.ModuleType):
        def __getattr__(self, name):
            if (name.startswith('__') and name.endswith('__')) or name in NOATTR: raise AttributeError(name)
            return _mk(name)
    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name.split('.')[0] in STUB and name.split('.')[0] not in keep:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
        def create_module(self, spec):
            m = StubModule(spec.name); m.__path__ = []; m.__version__ = '2.14.1'
            return m
        def exec_module(self, module): pass
    sys.meta_path.insert(0, Finder())
    global_pkg = types.ModuleType("sglang")
    global_pkg.__path__ = [os.path.join(src, "sglang")]
    sys.modules["sglang"] = global_pkg
    sys.path.insert(0, src)


_ACTIONS = {"_StoreAction": "store", "_StoreTrueAction": "store_true",
            "BooleanOptionalAction": "boolean_optional", "LoRAPathAction": "store",
            "DeprecatedStoreConstAction": "store_const", "DeprecatedStoreTrueAction": "store_true"}
# human_int: SGLang's human_readable_int (utils/common.py), an integer or 128k / 1Mi
# json: json.loads; json_list: SGLang's json_list_type (utils/common.py), orjson.loads
# cuda_graph_config / cuda_graph_backend: parse_cuda_graph_config_arg / parse_cuda_graph_backend_arg
# (model_executor/cuda_graph_config.py)
_TYPES = {"int": "int", "float": "float", "human_readable_int": "human_int", "loads": "json",
          "json_list_type": "json_list", "parse_cuda_graph_config_arg": "cuda_graph_config",
          "parse_cuda_graph_backend_arg": "cuda_graph_backend"}


def extract(src: str) -> dict:
    os.environ.setdefault("SGLANG_USE_CPU_ENGINE", "1")  # pick SGLang's CPU platform, no device probe
    install_stubs(src)
    import msgspec

    import sglang.srt.server_args as sa
    from sglang.srt.arg_groups.arg_utils import record_fields

    from sglang.srt.utils.server_args_config_parser import ConfigArgumentMerger

    parser = argparse.ArgumentParser(prog="sglang serve")
    sa.ServerArgs.add_cli_args(parser)
    # What SGLang's own --config loader refuses (it takes store_true and one-value actions only).
    refused = {id(a) for a in ConfigArgumentMerger(parser).unsupported_actions.values()}
    options = []
    for action in parser._actions:
        if action.dest == "help":
            continue
        kind = _ACTIONS.get(type(action).__name__)
        if kind is None:
            raise SystemExit(f"unknown argparse action {type(action).__name__} for {action.dest}")
        type_name = getattr(action.type, "__name__", None) if action.type else None
        entry = {"dest": action.dest, "flags": list(action.option_strings), "action": kind,
                 "type": _TYPES.get(type_name, "str"), "nargs": action.nargs}
        if action.choices is not None:
            entry["choices"] = [str(c) for c in action.choices]
        if kind == "store_const":
            # DeprecatedStoreConstAction (arg_groups/argparse_actions.py) stores const_value, not const
            entry["const"] = msgspec.to_builtins(getattr(action, "const_value", action.const))
        if id(action) in refused:  # "Unsupported config option '...' with action '<class>'"
            entry["config_refused"] = type(action).__name__
        options.append(entry)
    fields = []
    for field in record_fields(sa.ServerArgs):
        default = None if field.default is msgspec.NODEFAULT else msgspec.to_builtins(field.default)
        if field.default_factory is not msgspec.NODEFAULT:
            default = msgspec.to_builtins(field.default_factory())
        fields.append({"name": field.name, "default": default})
    return {"sglang_version": "0.5.23", "prog": parser.prog, "allow_abbrev": parser.allow_abbrev,
            "options": options, "resolved_fields": fields}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="the folder that holds SGLang's python package (sglang/)")
    data = extract(ap.parse_args().src)
    # One option / field per line, so a new SGLang release reads as a small diff.
    out = sys.stdout
    out.write("{\n")
    for key in ("sglang_version", "prog", "allow_abbrev"):
        out.write(f"{json.dumps(key)}: {json.dumps(data[key])},\n")
    for key in ("options", "resolved_fields"):
        rows = ",\n".join(" " + json.dumps(row) for row in data[key])
        out.write(f"{json.dumps(key)}: [\n{rows}\n]{',' if key == 'options' else ''}\n")
    out.write("}\n")


if __name__ == "__main__":
    main()
