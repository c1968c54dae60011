"""The per-trial deadline: the rule (tuner.engine.deadline), and a real server that answers, slowly,
past it (the stand-in server launched by ServerBackend): the measurement ends as hung, recorded
before its server is killed, with what it measured kept on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.processes import gone
from support.standin import standin_python

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError
from tuner.engine.backends import ServerBackend
from tuner.engine.deadline import DEADLINE_FLOOR_S, trial_deadline
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]


def study(tmp_path, extra: str = "", env: str = "{}"):
    p = tmp_path / "d.yaml"
    p.write_text(f"""name: d
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server: {{backend: sim, python: {standin_python(tmp_path)}, model_path: m, draft_model_path: dr,
          startup_timeout_s: 30, stop_grace_s: 30, env: {env}, sim: {{speedup: 20, load_seconds: 0}}}}
bench:
  suite: {{name: s, prompts: [{{name: a, text: hello}}], single: {{lengths: [8], repeats: 3}},
          sweep: {{concurrencies: [1]}}, warmup: {{requests: 0}}, timeout_s: 600}}
  {extra}
objectives: [single_speedup, speedup@1]
""")
    return load_study(p)


def test_the_rule(tmp_path):
    config = study(tmp_path)
    assert trial_deadline(config, None)[0] is None  # the baseline: the hang rules only
    seconds, why = trial_deadline(config, {"suite_wall_s": 400.0, "duration_s": 999.0})
    assert seconds == 30 + 3 * 400 and "3 x the baseline's suite time 400 s" in why
    assert trial_deadline(config, {"suite_wall_s": 2.0})[0] == 30 + DEADLINE_FLOOR_S  # the floor
    assert trial_deadline(config, {"duration_s": 200.0})[0] == 30 + 600  # an older baseline
    explicit = study(tmp_path, "trial_timeout: 45m")
    assert trial_deadline(explicit, None) == (2700.0, "bench.trial_timeout 45m")
    assert trial_deadline(explicit, {"suite_wall_s": 1.0})[0] == 2700.0


@pytest.mark.parametrize("value, says", [("20s", "must exceed server.startup_timeout_s (30 s)"),
                                         ("1h30", "write 1h30m"), (0, "must be positive")])
def test_a_trial_timeout_that_cannot_work_is_refused(tmp_path, value, says):
    with pytest.raises(ConfigError, match="bench") as exc:
        study(tmp_path, f"trial_timeout: {value}")
    assert says in str(exc.value)


def test_a_server_answering_slowly_past_the_deadline_is_hung_and_killed(tmp_path):
    config = study(tmp_path, env="{STANDIN_MODES: '*=slow', STANDIN_SLOW_S: '2'}")
    backend = ServerBackend(config, {}, load_suite(config.bench.suite))
    backend.set_trial_deadline(5.0, "a test's")  # launch (well under 5 s) + 3 single requests of 2 s each
    recorded = []

    def record(m):
        recorded.append((m, [json.loads(p.read_text())["pid"] for p in (Path(config.workdir) / "servers").glob("*")]))

    m = backend.measure(SpecConfig(3, 1, 4), "trials/0", record)
    assert m.failure_class == "hung" and "passed its deadline" in m.failure_message
    assert "trial deadline 5 s: a test's" in m.failure_message
    assert m.figures is None and len(recorded) == 1
    (_, pids), = recorded
    assert pids and all(gone(pid) for pid in pids)  # alive when recorded, killed after
    # The partial result goes with the measurement; the recorder writes it (tuner.engine.finish).
    assert m.result_path.endswith("suite.partial.json") and m.to_save is not None
    partial = m.to_save.to_dict()
    assert partial["complete"] is False
    assert sum(r["ok"] for r in partial["records"]) >= 1  # what it measured before the deadline
