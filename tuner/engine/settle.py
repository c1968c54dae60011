"""Which measured setting the structured sampler's last launches measure again.

On its last ``confirm`` launches (:class:`tuner.engine.structured.StructuredSampler`) the study
settles the picks ``tuner study export`` will return rather than explore. Two rules, both pure
functions of what was measured (indices into the measured settings):

* :func:`disputed` (the default, ``dispute: true``): an export pick that the model disputes, and
  the setting the model believes better.
* :func:`unconfirmed_pick` (``dispute: false``, the rule before ``dispute``): a pick resting on
  one reading close to a rival's (None: no such pick).

``means``: each measured setting's mean log reading per objective (what export ranks by);
``counts``: its readings. Chosen on the training landscapes (README, "How the tuner searches"); the
choice within a disputed pair was by readings counted (the rival when it had fewer) until the
look-ahead took it over.
"""

from __future__ import annotations

import math

import numpy as np


def disputed(believed: list, means: np.ndarray, busy: list) -> list[int]:
    """The settings in dispute: for every objective whose export pick (best mean reading) the model
    disputes -- it believes another measured setting truly better, from the readings of their
    neighbours as well as their own -- that pick and the model's own pick, unless another worker is
    measuring it (``busy``). ``believed``: per objective, the model's mean at each measured setting
    (log values). Which of them the last launch measures again is the look-ahead's call
    (:meth:`tuner.engine.structured.StructuredSampler.propose`): a lucky reading falls back, an
    unlucky one rises, and the one whose next reading is worth more to export's picks goes."""
    out: set[int] = set()
    for o, mean in enumerate(believed):
        pick, rival = int(np.argmax(means[:, o])), int(np.argmax(mean))
        if pick != rival:
            out.update(j for j in (pick, rival) if not busy[j])
    return sorted(out)


def unconfirmed_pick(means: np.ndarray, counts: np.ndarray, noise_var: float, busy: list) -> int | None:
    """The export pick that rests on a single reading while another measured setting reads within
    two noise widths of it -- the closest such call of any objective -- unless another worker is
    measuring it. Measured again, a lucky reading falls back and a good one stands."""
    width = 2 * math.sqrt(noise_var)
    closest = None
    for o in range(means.shape[1]):
        order = np.argsort(-means[:, o])
        if len(order) < 2 or counts[order[0]] > 1:
            continue
        lead = means[order[0], o] - means[order[1], o]
        if lead < width and (closest is None or lead < closest[0]):
            closest = (lead, int(order[0]))
    return None if closest is None or busy[closest[1]] else closest[1]
