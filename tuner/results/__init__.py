"""The results layer: read a study, decide, render. Never writes a trial.

Owns the status table, the Pareto front and its picks (``pareto``), the exported SGLang config
(``export``), the adaptive policy built from a study (``adaptive``) and the HTML/PNG report
(``report_data`` -> ``report_plots`` -> ``report``).

Also the confirmed picks (``confirmed``: confirmation runs read back, means with 95% intervals) and
the workload, SLO and lossless lines every view shares (``traffic``).

May import: :mod:`tuner.engine` (records, baseline, storage URLs), :mod:`tuner.server` (the launch
plan an export repeats), :mod:`tuner.bench` (its statistics and workload description, never its
client), :mod:`tuner.config`, :mod:`tuner.sglang`. Never :mod:`tuner.cli`.
"""
