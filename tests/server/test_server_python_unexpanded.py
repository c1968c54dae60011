"""``server.python`` is run as written (execve; no shell expands it): ``~/venv/bin/python`` or
``$HOME/venv/bin/python`` is a file named so, not the user's venv. QA (qa187): the line said
"~/sglang-venv/bin/python does not exist or is not a file" of a file the user's shell lists, and
named no cause. Checked before anything of the launch is written (:mod:`tuner.server.interpreter`)."""

from __future__ import annotations

import pytest

from tuner.config.study import ServerSettings
from tuner.config.yamlfile import ConfigError
from tuner.server.launcher import ServerProcess


@pytest.mark.parametrize("python", ["~/sglang-venv/bin/python", "$HOME/sglang-venv/bin/python",
                                    "${VENV}/bin/python"])
def test_a_tilde_or_a_variable_in_server_python_is_said_to_be_unexpanded(tmp_path, monkeypatch, python):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("VENV", str(tmp_path / "sglang-venv"))
    (tmp_path / "sglang-venv" / "bin").mkdir(parents=True)  # the venv the user means exists
    settings = ServerSettings.model_validate({"backend": "sglang", "python": python, "model_path": "org/model",
                                              "tp_size": 1, "host": "127.0.0.1", "port": 0})
    srv = ServerProcess(settings, None, workdir=tmp_path / "w")
    with pytest.raises(ConfigError) as err:
        srv.start()
    assert err.value.key == "server.python" and "is not expanded here; write the path out" in str(err.value)
    assert srv.proc is None and not (tmp_path / "w").exists()  # nothing launched, nothing written
