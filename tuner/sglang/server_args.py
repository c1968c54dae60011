"""SGLang 0.5.23's launch flags and resolved server-argument fields, as SGLang's own code has them.

The table ``server_args_0_5_23.json`` beside this module is written by ``tools/sglang_server_args.py``
from SGLang's source: its real argparse parser (``srt/server_args.py``, ``prepare_server_args``:
``argparse.ArgumentParser(prog="sglang serve")``, ``allow_abbrev`` left at argparse's default,
True, plus ``ServerArgs.add_cli_args``) and the fields of the ``ServerArgs`` record that
``ServerArgs.resolved_dict()`` serializes for ``/server_info``.

What follows from it, and what the simulator mirrors:

* every flag SGLang takes is accepted (531 actions); a unique prefix of a flag is that flag, an
  ambiguous prefix is argparse's exit 2 (``--cuda-graph-max-bs`` could match
  ``--cuda-graph-max-bs-decode`` and ``--cuda-graph-max-bs-prefill``: the pre-0.5.23 name no longer
  launches);
* ``/server_info`` reports all 546 fields, by SGLang's names, in SGLang's order.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from .. import shipped

SERVER_ARGS_TABLE = shipped(__package__, "server_args_0_5_23.json")

#: What argparse takes for a negative number, hence a value (Lib/argparse.py, Python 3.10-3.12,
#: ``_negative_number_matcher``): SGLang registers no option that looks like one, so such a string
#: is never read as an option.
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass(frozen=True)
class ServerOption:
    """One argparse action of ``sglang serve``: its ``dest``, flags and how it parses."""

    dest: str
    flags: tuple[str, ...]
    action: str  #: store | store_true | boolean_optional | store_const
    type: str  #: int | human_int (SGLang's human_readable_int: 128k, 1Mi) | float | str (other parsers)
    nargs: str | int | None
    choices: tuple[str, ...] | None
    const: object = None
    #: SGLang's action class when its ``--config`` loader refuses this option in a YAML
    #: (``utils/server_args_config_parser.py``: store_true and one-value actions only, so
    #: BooleanOptionalAction, DeprecatedStoreTrueAction, LoRAPathAction); None when it loads
    config_refused: str | None = None


@dataclass(frozen=True)
class ServerArgsTable:
    sglang_version: str
    prog: str
    options: tuple[ServerOption, ...]
    #: (name, default) of every ``ServerArgs`` field, in ``resolved_dict()`` order
    resolved_fields: tuple[tuple[str, object], ...]

    def defaults(self) -> dict:
        """Every resolved field at its ``ServerArgs`` default (before SGLang's resolution)."""
        return {name: default for name, default in self.resolved_fields}

    # The indexes below are built once per table: a study's checks look a flag up several times each,
    # and a scan of the 531 options per lookup made a study file of 5,000 `extra_args` take 83 s to
    # check (QA). cached_property writes the instance's __dict__, which a frozen dataclass allows.
    @cached_property
    def _by_dest(self) -> dict[str, ServerOption]:
        return {o.dest: o for o in reversed(self.options)}  # reversed: the first option of a dest wins

    @cached_property
    def _by_flag(self) -> dict[str, ServerOption]:
        return {f: o for o in reversed(self.options) for f in o.flags}

    @cached_property
    def _sorted_flags(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_flag))

    def option(self, dest: str) -> ServerOption | None:
        return self._by_dest.get(dest)

    def option_named(self, name: str) -> ServerOption | None:
        """A server argument as a study writes it (underscores): SGLang's ``dest``, else the option
        argparse takes its flag for (an alias, a unique abbreviation: :meth:`option_for_flag`)."""
        return self.option(name) or self.option_for_flag("--" + name.replace("_", "-"))

    def option_for_flag(self, flag: str) -> ServerOption | None:
        """The option argparse takes ``flag`` for: an exact flag or alias (``--model`` is
        ``--model-path``), else a unique prefix (``allow_abbrev``); None when unknown or ambiguous."""
        if flag in self._by_flag:
            return self._by_flag[flag]
        flags = self._sorted_flags  # the flags starting with `flag` are one run of the sorted list
        start = bisect.bisect_left(flags, flag)
        end = start
        while end < len(flags) and flags[end].startswith(flag):
            end += 1
        prefixed = {self._by_flag[f].dest: self._by_flag[f] for f in flags[start:end]}
        return next(iter(prefixed.values())) if len(prefixed) == 1 else None

    def reads_as_option(self, text: str) -> bool:
        """Whether SGLang's argparse takes ``text``, given as the value of a flag (``--model-path
        -models/kimi``, as the launcher writes argv and SGLang's ``--config`` loader expands a YAML),
        for an option string instead: the flag then fails with "expected one argument".

        Mirrors ``ArgumentParser._parse_optional`` (Lib/argparse.py, Python 3.10-3.12, checked
        against SGLang 0.5.23's real parser): a string starting with '-' is an option unless it is
        '-' alone, a negative number (``-1``, ``-.5``; not ``-1e3``), or holds a space, and even
        then it is one when the part before a '=' is a flag, or an abbreviation of one (``--port=1
        x``), or it starts with a one-letter flag (``-h x``: argparse's own ``-h``). Python 3.13
        takes a few more as numbers (``-1e3``); refusing those too keeps a study launchable on
        either."""
        if len(text) < 2 or not text.startswith("-"):
            return False
        if " " not in text and not _NEGATIVE_NUMBER.match(text):
            return True
        flags = set(self._by_flag) | {"-h", "--help"}
        head = text.split("=", 1)[0]
        if text.startswith("--"):
            return any(f.startswith(head) for f in flags)
        return head in flags or text[:2] in flags


@lru_cache(maxsize=1)
def server_args_table() -> ServerArgsTable:
    data = json.loads(SERVER_ARGS_TABLE.read_text())
    options = tuple(
        ServerOption(dest=o["dest"], flags=tuple(o["flags"]), action=o["action"], type=o["type"],
                     nargs=o["nargs"], choices=tuple(o["choices"]) if o.get("choices") else None,
                     const=o.get("const"), config_refused=o.get("config_refused"))
        for o in data["options"])
    fields = tuple((f["name"], f["default"]) for f in data["resolved_fields"])
    return ServerArgsTable(data["sglang_version"], data["prog"], options, fields)
