"""Per-trial files (server log, the suite's JSON) stored as Optuna artifacts, for optuna-dashboard.

The store is a plain folder, ``<workdir>/artifacts`` (Optuna's ``FileSystemArtifactStore``); the
storage records, per trial, which artifact is which file. Open both with::

    optuna-dashboard sqlite:///studies/NAME.db --artifact-dir studies/NAME/artifacts

Contract: call :func:`store_trial_artifacts` while the trial is still RUNNING (before
``study.tell``): Optuna attaches artifacts through trial system attributes, which a finished trial
no longer accepts. A trial that is already finished gets its files attached to the study instead,
named ``trial-N-<file>``, so nothing is lost. Missing files are skipped (a launch that failed
before the suite ran has no suite JSON). A server log is stored as a capped copy
(:func:`tuner.server.logcap.capped_copy`, ``server.log_max_mb``): never more than the cap and its
marker line, even when its server still writes it or it was left uncapped (a replay after a crash).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterable, Mapping

from ..server.logcap import MIB, capped_copy
from .whole_file import write_whole

ARTIFACT_DIR = "artifacts"


def artifact_dir(workdir: str | Path) -> Path:
    """Where a study's artifacts live: ``<workdir>/artifacts`` (the folder optuna-dashboard needs)."""
    return Path(workdir) / ARTIFACT_DIR


def artifact_store(workdir: str | Path):
    """Optuna's file-system artifact store under ``workdir`` (the folder is created), writing each
    artifact whole or not at all (:func:`tuner.engine.whole_file.write_whole`). Optuna's own store
    writes the file in place (optuna/artifacts/_filesystem.py, ``FileSystemArtifactStore.write``),
    and ``upload_artifact`` records it only after: a full disk left a 0-byte or truncated file that
    no trial names in ``artifacts/`` at every trial that hit it (QA, qa96)."""
    from optuna.artifacts import FileSystemArtifactStore

    path = artifact_dir(workdir)
    path.mkdir(parents=True, exist_ok=True)

    class WholeFileArtifactStore(FileSystemArtifactStore):
        def write(self, artifact_id: str, content_body: BinaryIO) -> None:
            write_whole(path / artifact_id, content_body)

    return WholeFileArtifactStore(base_path=str(path))


def store_trial_artifacts(study, trial_id_or_trial, paths: Iterable[str | Path | None], workdir: str | Path,
                          caps: Mapping[str, float] | None = None) -> list[str]:
    """Upload each existing file of ``paths`` as an artifact of the trial; returns the artifact ids.

    ``trial_id_or_trial``: an ``optuna.Trial`` (from ``study.ask()``), a ``FrozenTrial``, or a trial
    id (``trial._trial_id``, not the trial number). ``caps``: a file's path (as given in ``paths``)
    -> its cap in MiB (``server.log_max_mb``; 0: none): that file is stored as a capped copy.
    """
    from optuna.artifacts import upload_artifact
    from optuna.trial import TrialState

    store = artifact_store(workdir)
    storage = study._storage
    trial_id = trial_id_or_trial if isinstance(trial_id_or_trial, int) else trial_id_or_trial._trial_id
    frozen = storage.get_trial(trial_id)
    caps = {str(p): mb for p, mb in (caps or {}).items()}
    files = [(Path(p), caps.get(str(p))) for p in paths if p and Path(p).is_file()]
    running = frozen.state == TrialState.RUNNING
    ids = []
    with tempfile.TemporaryDirectory() as tmp:
        for f, cap in files:
            upload = f
            if not running or cap is not None:
                upload = Path(tmp) / (f.name if running else f"trial-{frozen.number}-{f.name}")
                if cap is None:
                    shutil.copyfile(f, upload)
                else:
                    capped_copy(f, upload, int(cap * MIB), cap)
            target = dict(study_or_trial=frozen, storage=storage) if running else dict(study_or_trial=study)
            ids.append(upload_artifact(artifact_store=store, file_path=str(upload), mimetype=_mimetype(f),
                                       **target))
    return ids


def _mimetype(path: Path) -> str | None:
    # Server logs have no registered type; as text/plain the dashboard shows them instead of offering a download.
    return "text/plain" if path.suffix in (".log", ".txt", "") else None
