"""Optuna's grid sampler as the engine runs it: by ask and tell, several workers, queued settings.

Optuna's :class:`~optuna.samplers.GridSampler` ends a study from its ``after_trial`` by calling
``study.stop()``, which raises ``RuntimeError`` outside ``Study.optimize`` (``study.py``'s ``stop``:
"supposed to be invoked inside an objective function or a callback"). The engine runs ask and tell,
so the tell of the grid's last point raised after storing its state (``_tell.py`` stores in a
``finally``): QA, every grid study whose budget outlasted its grid ended in a traceback at that
tell, the worker dead, its journal entry left behind. :class:`StudyGridSampler` stops nothing
itself; the runner asks :meth:`StudyGridSampler.done` before each trial and ends the run when
every grid point has finished (:mod:`tuner.engine.runner`), as ``Study.optimize`` would.
"""

from __future__ import annotations

from optuna.samplers import GridSampler


class StudyGridSampler(GridSampler):
    """:class:`optuna.samplers.GridSampler` without the ``study.stop()`` of its ``after_trial``."""

    def after_trial(self, study, trial, state, values) -> None:
        """Nothing: whether the grid is done is read by :meth:`done`, not signalled by a stop."""

    def done(self, study) -> bool:
        """Whether every point of the grid has a finished trial (any worker's, any state), the
        condition Optuna's own ``after_trial`` stops ``Study.optimize`` on; read from the storage.
        Optuna's ``_get_unvisited_grid_ids`` lists the points not yet started, or, once all are, those
        not yet finished: empty only when all are finished."""
        return not self._get_unvisited_grid_ids(study)
