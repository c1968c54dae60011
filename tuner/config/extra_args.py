"""``server.extra_args`` (raw argv, appended last to every launch) counted as SGLang 0.5.23's argparse
counts the words each of its flags takes (:func:`extra_args_problem`), so what its parser stops every
launch on is refused when the study file loads, not on the GPU node, baseline first; and read as it
reads them (:func:`extra_args_given`), so the checks of ``server.args`` see what they set too.

Why its own module: :mod:`tuner.config.server_arg_checks` checks server arguments given as keys and
values (``server.args``, a space's ``fixed``); this one reads argv words, as argparse does.
"""

from __future__ import annotations

import math
from typing import Any


def extra_args_problem(argv: list[str]) -> str | None:
    """Why SGLang 0.5.23's argparse stops every launch given raw argv ``argv`` (``server.extra_args``,
    appended last), judged by how many words each flag it knows takes, or None. The launch and the
    export's command line (``tuner study export``) both hand these words to it as they are:

    * a switch (store_true, ``--flag/--no-flag``: nargs 0; SGLang makes every bool field one,
      ``arg_groups/arg_utils.py`` lines 393-395, "Bool -> store_true", and a list field nargs "+",
      lines 373-380) followed by a word: "unrecognized arguments: true"; given ``=value``: "ignored
      explicit argument";
    * a one-value flag followed by a second word (``--served-model-name my model``): "unrecognized
      arguments: model"; with no word after it, or one argparse reads as an option
      (``--served-model-name -x``): "expected one argument" (list flags, nargs "+": "expected at
      least one argument");
    * a word before any flag.

    A flag SGLang 0.5.23 does not know (another release's, as ``server.extra_args`` allows), or an
    abbreviation two flags share, takes any words after it: its arity is not known here. Option or
    value is decided as SGLang's argparse does (``ServerArgsTable.reads_as_option``: ``-1`` is a
    value)."""
    from ..sglang.server_args import server_args_table

    table = server_args_table()
    need, more = 0, 0  #: words the flag before still needs, and may still take (math.inf: any)
    flag = ""  #: that flag, as written
    for i, word in enumerate(argv):
        if not table.reads_as_option(word):
            if need == 0 and more == 0:
                return _stray(i, word, flag, table)
            need, more = (need - 1, more) if need else (0, more - 1)
            continue
        if need:
            return _missing(i - 1, flag, table, word)
        flag, eq, value = word.partition("=")
        option = table.option_for_flag(flag)
        if option is None:
            if (stop := _not_a_flag(i, word, flag, table)) is not None:
                return stop
            need, more = 0, math.inf  # not SGLang 0.5.23's: another release's, its words are its own
        elif option.nargs == 0 and eq:
            return (f"entry {i} ({word!r}): {flag} is a switch and takes no value (SGLang's argparse "
                    f"stops every launch: ignored explicit argument {value!r}); {_switch_fix(option)}")
        elif eq:
            need, more = 0, 0  # argparse: the one value after '=', whatever the nargs
        else:
            need, more = {0: (0, 0), None: (1, 0), "?": (0, 1), "*": (0, math.inf),
                          "+": (1, math.inf)}.get(option.nargs, (option.nargs, 0))
    if need:
        return _missing(len(argv) - 1, flag, table, None)
    return None


def _not_a_flag(i: int, word: str, flag: str, table) -> str | None:
    """Why argparse stops every launch at option word ``word`` that names no SGLang 0.5.23 option,
    whatever release runs it, or None (a flag of another release). Verdicts of SGLang 0.5.23's real
    parser (``prepare_server_args``), QA (qa128): ``--help``, ``-h`` and ``--he`` print its usage and
    exit 0, so no server ever starts; ``-tp 2`` and ``-- x``: "unrecognized arguments"."""
    if flag in ("-h", "--help") or (len(flag) > 3 and "--help".startswith(flag)
                                    and not any(f.startswith(flag) for o in table.options for f in o.flags)):
        return (f"entry {i} ({word!r}) asks SGLang's parser for its usage: it prints it and exits, so the "
                "server never starts; remove it")
    if flag == "--":
        return (f"entry {i} ('--') ends SGLang's options, and its argparse stops every launch on the "
                "words after it (unrecognized arguments); remove it")
    if not flag.startswith("--"):
        return (f"entry {i} ({word!r}): SGLang's options all start with '--' (its argparse stops every "
                f"launch: unrecognized arguments: {word}); write the flag's whole name (--tp-size, not -tp)")
    # An abbreviation several 0.5.23 flags share (--mod) stops 0.5.23 too, but may be a whole flag of
    # another release: --cuda-graph-max-bs, ambiguous in 0.5.23, is how an older SGLang is given the
    # graph cap (README, "The command"), so it is left to the release that runs it
    return None


def _stray(i: int, word: str, flag: str, table) -> str:
    """A word no flag before it takes: SGLang's argparse "unrecognized arguments"."""
    why = f"SGLang's argparse stops every launch with 'unrecognized arguments: {word}'"
    if not flag:
        return f"entry {i} ({word!r}) is the value of no option ({why}); put its flag before it, or remove it"
    option = table.option_for_flag(flag)
    if option is not None and option.nargs == 0:
        return (f"entry {i} ({word!r}) follows the switch {flag}, which takes no value ({why}); "
                f"{_switch_fix(option)}")
    return (f"entry {i} ({word!r}) is one word too many for {flag}, which takes one value ({why}); a "
            "value holding spaces is one entry, not several, or remove it")


def _switch_fix(option) -> str:
    """How to give switch ``option`` on the command line: by its name alone."""
    if option.action == "boolean_optional":
        return f"write {option.flags[0]} alone for on, {option.flags[-1]} alone for off"
    return f"write {option.flags[0]} alone for on, leave it out for off"


def _missing(i: int, flag: str, table, after: str | None) -> str:
    """A flag with no value after it: SGLang's argparse "expected one argument"."""
    option = table.option_for_flag(flag)
    count = "at least one argument" if option is not None and option.nargs == "+" else "one argument"
    seen = "nothing follows it" if after is None else f"the next entry {after!r} reads as an option"
    # a value argparse reads as an option (-x) is taken after '=' (SGLang's parser: --served-model-name=-x)
    fix = (f"; a value starting with '-' goes as {flag}={after}" if after is not None
           and table.option_for_flag(after.partition("=")[0]) is None
           and not (option is not None and option.nargs == "+") else "")
    return (f"entry {i} ({flag}) needs a value and {seen} (SGLang's argparse stops every launch: expected "
            f"{count}); give its value in the next entry{fix}")


def extra_args_given(argv: list[str]) -> dict[str, Any]:
    """What raw argv (``server.extra_args``) sets, as SGLang 0.5.23's argparse reads it: ``{dest:
    value}``, a switch True (its ``--no-`` form False), a value converted by its option's type when it
    is a number. Flags SGLang does not know are left out, and so is a number flag whose word is no
    number (the launch's command-line check says so: :mod:`tuner.engine.preflight`, `tuner doctor`);
    a flag given twice keeps the last, as argparse does. The words have been counted already
    (:func:`extra_args_problem`). The study's checks and the rules' context read ``server.extra_args``
    through it, beside ``server.args`` (QA: the DP, LM-head and hybrid-cache checks read ``args``
    alone)."""
    from ..sglang.arg_types import human_readable_int
    from ..sglang.server_args import server_args_table

    table = server_args_table()
    convert = {"int": int, "human_int": human_readable_int, "float": float}
    given: dict[str, Any] = {}
    for i, word in enumerate(argv):
        if not word.startswith("--") or not table.reads_as_option(word):
            continue
        flag, eq, value = word.partition("=")
        option = table.option_for_flag(flag)
        if option is None:
            continue
        if option.nargs == 0:
            if option.action == "store_const":
                given[option.dest] = option.const
            else:
                # a --flag/--no-flag pair (BooleanOptionalAction): the --no- form, or a prefix of it, is False
                given[option.dest] = not (option.action == "boolean_optional" and any(
                    f.startswith("--no-") and f.startswith(flag) for f in option.flags))
            continue
        many = option.nargs not in (None, "?")  # "+", "*" or a count: a list of the words after it
        values = [value] if eq else []
        if not eq:
            for after in argv[i + 1:]:
                if table.reads_as_option(after) or (values and not many):
                    break
                values.append(after)
        if not values:
            continue

        kind = convert.get(option.type)
        try:
            typed = [kind(v) for v in values] if kind is not None else values
        except (TypeError, ValueError):
            given.pop(option.dest, None)  # no number: argparse stops the launch on it (not this reader's to say)
            continue
        given[option.dest] = typed if many else typed[0]
    return given
