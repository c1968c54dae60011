"""A model's ``config.json`` is read as UTF-8 (JSON's encoding, and transformers' ``encoding="utf-8"``)
whatever the locale.

QA (qa167): under ``LC_ALL=C PYTHONUTF8=0`` a config.json holding one non-ASCII character (an em
dash in a comment) made ``tuner study create`` refuse the model: ``server.model_path: .../config.json:
not a readable JSON config: 'ascii' codec can't decode byte 0xe2 ...; repair or download it again``,
though the server reads it. The reader runs in a process of that locale (its encoding is fixed at
start-up).
"""

from __future__ import annotations

import os
import subprocess
import sys

READ = "import sys; from tuner.sglang.model import read_model_facts; print(read_model_facts(sys.argv[1]).attention)"


def read_under(locale_env: dict, folder) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k not in ("LANG", "PYTHONUTF8")}
    return subprocess.run([sys.executable, "-c", READ, str(folder)], capture_output=True, text=True,
                          env={**env, **locale_env}, timeout=60, stdin=subprocess.DEVNULL)


def test_a_non_ascii_config_reads_under_an_ascii_locale(tmp_path):
    (tmp_path / "config.json").write_bytes(
        '{"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512, "_comment": "K2 \u2014 MLA"}'.encode())
    done = read_under({"LC_ALL": "C", "PYTHONUTF8": "0"}, tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "mla"), done.stderr


def test_a_file_that_is_not_utf8_is_still_said_unreadable(tmp_path):
    (tmp_path / "config.json").write_bytes(b'{"architectures": ["Llama\xff"]}')
    done = read_under({"LC_ALL": "C.UTF-8"}, tmp_path)
    assert done.returncode != 0 and "not a readable JSON config: 'utf-8' codec can't decode" in done.stderr
