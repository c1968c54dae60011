"""Test files that take long, started first on every xdist worker (``tests/conftest.py``).

pytest-xdist's ``worksteal`` scheduler hands each worker one contiguous share of the collection, in
collection order, and an idle worker takes the second half of another's queue. Collected in path
order, the longest files landed where they fell: the root's wheel and README-recipe tests (a minute
or two each on a loaded 2-core machine) came last, started when the other workers were already
idle, and the suite's last two minutes ran them nearly alone (CI: 97% to 100% took over two
minutes). :func:`spread` puts the long files at the head of the workers' shares, balanced by their
weight, so they run beside the short tests instead of after them; what a test does is unchanged,
and so is the order of the tests within a file (a long file's module fixtures are set up once, on
one worker). Only the order changes: a stale weight costs time, never a result.

``WEIGHTS``: seconds a file took in a whole-suite run (``--durations``, summed per file, at load ~12
on 2 cores, so larger than CI's; only their ranking matters), files of 45 s or more.
"""

from __future__ import annotations

WEIGHTS = {
    "engine/test_unplanned_faults.py": 326,
    "engine/test_pruning.py": 292,
    "results/test_confirm.py": 271,
    "engine/test_storage_outages.py": 263,
    # added from a later CI-like run (--durations=150, times 2.9 to this scale: its files' ratio)
    "engine/test_paused_during_the_load.py": 100,
    "engine/test_own_open_file_limit.py": 90,
    "engine/test_pg_frozen_mid_measurement.py": 59,
    "engine/test_attention_backend_study.py": 52,
    "engine/test_server_out_of_threads.py": 35,
    "engine/test_stalls_in_a_row.py": 75,
    "engine/test_password_everywhere.py": 230,
    "engine/test_search_efficiency.py": 214,
    "results/test_hand_edited_reported_attrs.py": 195,
    "engine/test_non_finite_values_at_run.py": 192,
    "engine/test_distributed_storage.py": 177,
    "results/test_export.py": 152,
    "config/test_storage_folder_chars.py": 145,
    "cli/test_study_model_backend.py": 141,
    "test_readme_quotes.py": 127,
    "engine/test_kill_points.py": 127,
    "engine/test_baseline_hiccup_suspected.py": 121,
    "results/test_report.py": 115,
    "engine/test_study_engine.py": 113,
    "cli/test_fuzz_inputs.py": 113,
    "engine/test_study_traffic_e2e.py": 102,
    "engine/test_eta_within_the_timeout.py": 99,
    "engine/test_baseline_other_hardware.py": 98,
    "cli/test_run_pipe_closed.py": 98,
    "engine/test_study_replaced_during_outage.py": 97,
    "engine/test_study_faults.py": 93,
    "results/test_hand_edited_attrs.py": 90,
    "engine/test_workdir_vanishing.py": 90,
    "engine/test_doctor.py": 86,
    "cli/test_closed_streams.py": 85,
    "engine/test_sparse_grid_replay.py": 84,
    "engine/test_confirm_owner_across_zones.py": 83,
    "engine/test_study_e2e.py": 81,
    "test_wheel.py": 80,
    "results/test_pareto_knee_line.py": 79,
    "results/test_export_confirmed_loss.py": 78,
    "engine/test_remeasure.py": 75,
    "engine/test_sampler_bounded_fit.py": 74,
    "engine/test_baseline_outage_journaled.py": 70,
    "engine/test_distributed_workers.py": 69,
    "engine/test_sigterm_before_baseline_try.py": 68,
    "results/test_export_after_extension.py": 67,
    "engine/test_hand_edited_figure_at_run.py": 66,
    "cli/test_small_fixes.py": 66,
    "sim/test_sim_landscape.py": 65,
    "engine/test_clocks_and_zones.py": 64,
    "engine/test_study_deleted_under_worker.py": 63,
    "cli/test_counts_in_the_singular.py": 63,
    "results/test_confirm_later_run.py": 61,
    "engine/test_lost_commits_in_the_trial_loop.py": 61,
    "engine/test_study_limits.py": 60,
    "engine/test_study_deleted_under_confirm.py": 59,
    "engine/test_hedge.py": 58,
    "cli/test_zone_a_day_from_utc.py": 58,
    "cli/test_compare_page_before_stdout.py": 58,
    "engine/test_outage_moments.py": 57,
    "cli/test_bad_inputs.py": 56,
    "engine/test_reaped_before_launch.py": 54,
    "engine/test_pruning_adaptive_suite.py": 54,
    "cli/test_disk_full.py": 53,
    "cli/test_picks_the_objectives_mean.py": 52,
    "sim/test_sim_server_failures.py": 51,
    "cli/test_study_output_escaped.py": 51,
    "engine/test_pruning_server.py": 49,
    "engine/test_ctrl_c_before_the_launch.py": 48,
    "engine/test_worker_lifecycle.py": 47,
    "test_wheel_zipimport.py": 46,
    "cli/test_confirm_signals.py": 45,
}


def shares(n: int, workers: int) -> list[int]:
    """The sizes of the contiguous shares xdist's worksteal scheduler first sends ``workers`` idle
    workers from ``n`` tests (``WorkStealingScheduling.check_schedule``: each the pending count over
    the workers still to serve)."""
    sizes, left = [], n
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def spread(items: list, workers: int, file_of, weights: dict[str, float] = WEIGHTS) -> list:
    """``items`` reordered for ``workers`` worksteal workers: the files in ``weights`` (by
    ``file_of(item)``), heaviest first, each given to the share with the least weight so far (longest
    processing time first), at the head of that share; the other tests after them in their order (a
    file among them may span two shares, as in the collection's own order). A long file's tests stay
    together; every file's stay in their order. One worker or none: ``items`` as given."""
    if workers < 2 or not items:
        return list(items)
    groups: dict[str, list] = {}
    for item in items:
        groups.setdefault(file_of(item), []).append(item)
    heavy = sorted((f for f in groups if f in weights), key=lambda f: (-weights[f], f))
    heads: list[list] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for f in heavy:
        i = min(range(workers), key=lambda j: (load[j], j))
        heads[i].extend(groups[f])
        load[i] += weights[f]
    rest = [item for f, group in groups.items() if f not in weights for item in group]
    out: list = []
    for head, size in zip(heads, shares(len(items), workers)):
        take = max(0, size - len(head))
        out += head + rest[:take]
        rest = rest[take:]
    return out + rest
