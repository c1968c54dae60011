"""`tuner doctor` on an SGLang release the rules were not checked against: its interpreter check
warns and points at the argument check below it, which runs that release's own parser (QA, qa135:
the warning told the user to "run `tuner doctor`", from inside `tuner doctor`)."""

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine import doctor


def test_an_unknown_release_is_a_warning_that_names_the_argument_check(tmp_path, monkeypatch):
    fake = tmp_path / "site" / "sglang"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.4.9"\n')
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    config = load_study(demo_study(tmp_path, **{"server.backend": "sglang"}))
    c = doctor.check_interpreter(config)
    assert c.status == doctor.WARN and "sglang 0.4.9" in c.message, c.message
    assert "'sglang arguments' check below" in c.message and "run `tuner doctor`" not in c.message, c.message
