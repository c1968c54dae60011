"""A suite asking a request more tokens than the server's context holds is refused before its first
request, one line naming the suite and the limit, exit 2 (QA, qa218: `tuner bench --suite quick`
against the simulator at --context-length 400 sent all 48 requests, 41 answered SGLang's HTTP 400,
and the run ended in tables of failed rows). SGLang 0.5.23 (``tokenizer_manager.py``
``_validate_one_request``) refuses input + max_new_tokens over the context, and an input is one
token at least; prompts the server tokenizes are left to its own answers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from click.testing import CliRunner
from support.simproc import running_sim

from tuner.cli import cli


def test_the_simulator_at_a_short_context_gets_no_request(tmp_path):
    out = tmp_path / "r.json"
    with running_sim("--context-length", "400", "--sim-noise", "0", speedup=50) as sim:
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", "quick", "--json", str(out)])
        log = sim.log
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and r.stdout == "", r.output
    assert lines[0].startswith("error: suite 'quick' asks up to 512 tokens per request (sweep fib, "
                               "sweep.max_tokens), the server's context length 400 (/server_info "
                               "context_length) or more: SGLang refuses such a request with HTTP 400"), lines[0]
    assert "(41 requests of the suite are so)" in lines[0]  # quick's 1 + 8 + 32 sweep requests
    assert not out.exists()  # nothing measured, nothing written
    assert "POST /generate" not in log and "Requested token count" not in log


class _Server(BaseHTTPRequestHandler):
    """SGLang as far as the check asks: /server_info without a context length (the flag not given),
    /v1/models with the model's; every other request is recorded and refused."""

    seen: list[str] = []
    info: dict = {"version": "0.5.23", "context_length": None}

    def do_GET(self):  # noqa: N802 - http.server's name
        body = {"/server_info": self.info,
                "/v1/models": {"object": "list", "data": [{"id": "m", "max_model_len": 64}]}}.get(self.path)
        self._answer(body)

    def do_POST(self):  # noqa: N802
        self._answer(None)

    def _answer(self, body):
        self.seen.append(f"{self.command} {self.path}")
        data = json.dumps(body or {"error": "no"}).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def _bench_against(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        return CliRunner().invoke(cli, ["bench", "--url", f"http://127.0.0.1:{server.server_port}", "--suite", "quick"])
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_context_comes_from_v1_models_when_server_info_has_none():
    r = _bench_against(_Server)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: suite 'quick' asks up to 128 tokens per request (single fib, single.lengths), "
                               "the server's context length 64 (/v1/models max_model_len) or more"), r.stderr
    assert _Server.seen == ["GET /server_info", "GET /v1/models"]  # no request sent


def test_a_server_that_truncates_is_sent_the_suite():
    # --allow-auto-truncate: SGLang lowers max_new_tokens to what the context leaves, refuses nothing
    class Truncating(_Server):
        seen: list[str] = []
        info = {"version": "0.5.23", "context_length": 64, "allow_auto_truncate": True}

    r = _bench_against(Truncating)
    assert "context length" not in r.stderr, r.stderr
    assert any(s.startswith("POST /generate") for s in Truncating.seen), Truncating.seen


def test_a_studys_baseline_stops_on_it_before_any_setting(tmp_path):
    # backend sim with the server's context pinned below the suite's max_tokens: what a study on SGLang
    # meets (its preflight knows no real server's context), built past the CLI's preflight
    import optuna
    import pytest

    from tuner.config.space import SearchSpace
    from tuner.config.study import study_from_dict
    from tuner.config.suite import load_suite
    from tuner.engine.backends import make_backend
    from tuner.engine.baseline import BaselineError
    from tuner.engine.runner import run_study
    from tuner.engine.study import create_study, open_study
    from support.model_study import SPACE

    config = study_from_dict({
        "name": "s", "search_space": str(SPACE), "bench": {"suite": "quick"}, "workdir": str(tmp_path / "wd"),
        "server": {"backend": "sim", "model_path": "moonshotai/Kimi-K2.6", "draft_model_path": "sim/kimi-k2.6-eagle3",
                   "tp_size": 8, "args": {"context_length": 400}, "sim": {"profile": "k2.6-tp8-pcie", "speedup": 200}},
        "budget": {"n_trials": 2}})
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    with pytest.raises(BaselineError) as err:
        run_study(config, storage, make_backend(config, SearchSpace.load(SPACE), load_suite("quick")))
    assert str(err.value).startswith("the autoregressive baseline failed (request_errors): suite 'quick' asks up "
                                     "to 512 tokens per request"), str(err.value)
    # no setting was launched, none blamed: the seeds stay queued
    assert {t.state.name for t in open_study("s", storage).get_trials(deepcopy=False)} <= {"WAITING"}
