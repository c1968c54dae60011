"""A backend that returns real :class:`tuner.bench.SuiteResult` objects -- every request record,
with latencies, TTFT, inter-token gaps and output text -- built from the simulator's performance
model, with no process and no HTTP. It sits below the engine's one seam (``Backend.measure``), so
SLO checks, goodput, the lossless check and confirmation run through the same code as a measured
server's figures, fast enough for studies of dozens of trials.

Per request (model time = wall time, ``time_scale`` 1):

* single request at length L: latency ``L / single_tok_per_s``, TTFT 5% of it, the rest split evenly
  over ``L - 1`` gaps; output text a pure function of (prompt, L), so the baseline and every trial
  agree unless ``lossy`` says otherwise;
* sweep at C: request i ends at ``span * (0.8 + 0.2 * (i + 1) / C)`` with ``span = C * tokens /
  tok_per_s@C`` (the aggregate is the model's figure); TTFT grows with C (a prefill of C prompts).

``noise``: relative jitter of each measurement's figures (seeded). ``lucky``: ``{SpecConfig:
factor}`` multiplies the FIRST measurement of that setting's sweep throughput (a lucky draw, for
confirmation tests). ``lossy``: ``{SpecConfig: k}`` changes the first k single outputs of that
setting at character 5.
"""

from __future__ import annotations

from tuner.bench import RequestRecord, SuiteResult
from tuner.engine.backends import Measurement, ModelBackend


class SuiteBackend(ModelBackend):
    def __init__(self, profile, suite, noise=0.01, seed=0, lucky=None, lossy=None):
        super().__init__(profile, suite, noise=noise, seed=seed)
        self.lucky, self.lossy = dict(lucky or {}), dict(lossy or {})
        self.measured: list = []  #: every spec measured, in order (None: the baseline)

    def measure(self, spec, label, record, on_event=None, on_stage=None):  # the article's order: no stages
        self.calls += 1
        exp = self.expected(spec)
        jitter = lambda: max(0.5, self.rng.gauss(1.0, self.noise))  # noqa: E731
        luck = self.lucky.get(spec, 1.0) if spec not in self.measured else 1.0
        self.measured.append(spec)
        res = SuiteResult(suite=self.suite.to_dict(), resolved_spec=spec, complete=True, server_version="model")
        accept = exp.accept_length
        t = 0.0
        single_tps = exp.single_tok_per_s * jitter()
        changed = self.lossy.get(spec, 0)
        for p in self.suite.single_prompts():
            for length in self.suite.single_lengths(p):
                for rep in range(self.suite.single.repeats):
                    lat = length / single_tps
                    text = f"{p.name}/{length}: " + "".join(chr(97 + (i * 7 + len(p.name)) % 26) for i in range(40))
                    if changed > 0 and rep == 0:
                        text = text[:5] + "#" + text[6:]
                        changed -= 1
                    res.records.append(_record("single", p.name, length, rep, 1, 0, t, lat, accept, text))
                    t += lat + 0.001
        for c, tps in exp.tok_per_s.items():
            tps = tps * jitter() * luck
            prompts = self.suite.prompts
            tokens = sum(self.suite.sweep_tokens(prompts[i % len(prompts)]) for i in range(c))
            span = tokens / tps
            for i in range(c):
                p = prompts[i % len(prompts)]
                lat = span * (0.8 + 0.2 * (i + 1) / c)
                res.records.append(_record("sweep", p.name, self.suite.sweep_tokens(p), 0, c, i, t, lat, accept,
                                           None, ttft_share=min(0.5, 0.01 * c)))
            t += span + 0.001
        res.refresh()
        m = Measurement(res)
        record(m)
        return m


def _record(phase, prompt, length, repeat, c, index, start, lat, accept, text, ttft_share=0.05):
    ttft = lat * ttft_share
    gap = (lat - ttft) / max(1, length - 1)
    return RequestRecord(phase, prompt, length, repeat=repeat, concurrency=c, index=index, start_s=start,
                         end_s=start + lat, ok=True, completion_tokens=length, prompt_tokens=20,
                         spec_verify_ct=None if accept is None else max(1, round(length / accept)), ttft_s=ttft, itl_s=[gap] * (length - 1),
                         output_text=text)
