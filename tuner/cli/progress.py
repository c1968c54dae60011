"""Progress of ``tuner study run``: one plain line per event (works in CI, nohup and log files)."""

from __future__ import annotations

import time

import click


def _fmt_s(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class RunView:
    """Receives the study engine's events and prints them."""

    def __init__(self):
        self.started = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        pass

    def line(self, text: str) -> None:
        click.echo(f"[{_fmt_s(time.monotonic() - self.started)}] {text}")

    def event(self, kind: str, info: dict) -> None:
        if kind == "trial_start":
            what = "baseline (autoregressive)" if info["trial"] == "baseline" else f"trial {info['trial']}: {info['spec']}"
            self.line(f"{what}: launching")
        elif kind == "trial_done":
            vals = info.get("values")
            result = ", ".join(f"{v:.3f}" for v in vals) if vals and info["status"] == "measured" else info.get("failure_class")
            self.line(f"trial {info['trial']}: {info['status']} ({result})")
        elif kind == "trial_skip":
            self.line(f"trial {info['trial']}: {info['spec']} skipped, {info['why']}")
        elif kind == "baseline" and info.get("reused"):
            self.line("baseline: already measured, reused")
        elif kind == "progress":
            self.line(f"{info['measured']} measured this run; elapsed {_fmt_s(info['elapsed_s'])}, "
                      f"ETA {_fmt_s(info.get('eta_s'))}")
        elif kind == "waiting":
            self.line(f"waiting for {info['for']}")
        elif kind == "reaped":
            self.line(f"trials {info['trials']} were left running by a dead worker: failed and queued again")
        elif kind == "phase" and info.get("phase") in ("launching", "benchmark", "stopping"):
            pass  # the live view (rich) shows phases; plain output stays one line per trial
