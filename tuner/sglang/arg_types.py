"""SGLang 0.5.23's own argparse types for its server arguments, as SGLang's code has them: the one
copy the study check (:mod:`tuner.config.server_arg_checks`), the simulator's parser
(:mod:`tuner.sim.parser`) and every place the tuner reads such a value as a number use.

Each raises ``argparse.ArgumentTypeError`` with SGLang's message, as SGLang's parser hands it to
argparse (``argument --context-length: Invalid integer value: ...``, exit 2).
"""

from __future__ import annotations

import argparse
import re
from decimal import Decimal


def human_readable_int(value: str) -> int:
    """SGLang 0.5.23's ``human_readable_int`` (``srt/utils/common.py``), the type of its token-count
    flags (``--context-length``, ``--max-total-tokens``, ``--max-prefill-tokens``,
    ``--cuda-graph-prefill-max-context`` alias ``--context-bucket``): the text stripped, then a
    number with an SI suffix (k, M, G, T; decimals allowed: 25.6k is 25600, truncated toward zero)
    or an IEC suffix (Ki, Mi, Gi, Ti; whole numbers only), case-sensitive; else whatever Python's
    ``int`` reads (``-1``, ``1_000``); SGLang's messages otherwise."""
    value = value.strip()
    si = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in iec:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. Use an integer IEC "
                    f"value such as '{int(Decimal(number))}{suffix}', or an SI value such as "
                    f"'{number}{suffix[0]}'.")
            return int(number) * iec[suffix]
        return int(Decimal(number) * si[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes "
            "(1Ki, 1Mi). Suffixes are case-sensitive.") from None


def token_count(value) -> int:
    """A token count a study gives (``server.args.context_length``: an integer, or text such as
    ``128k``) as SGLang reads it: the text the launcher writes (``str(value)``) through
    :func:`human_readable_int`. ``argparse.ArgumentTypeError`` (SGLang's message) when SGLang refuses
    it, a switch's true/false and a YAML float (``128000.0``) included."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise argparse.ArgumentTypeError(f"Invalid integer value: '{value}'.")
    return human_readable_int(str(value))
