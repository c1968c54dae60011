"""Which measured setting the structured sampler's last launches measure again.

On its last ``confirm`` launches (:class:`tuner.engine.structured.StructuredSampler`) the study
settles the picks ``tuner study export`` will return rather than explore. Two rules, both pure
functions of what was measured (indices into the measured settings, or None for no such setting):

* :func:`disputed_pick` (the default, ``dispute: true``): an export pick that the model disputes.
* :func:`unconfirmed_pick` (``dispute: false``, the rule before): a pick resting on one reading
  close to a rival's.

``means``: each measured setting's mean log reading per objective (what export ranks by);
``counts``: its readings. Chosen on the training landscapes (README, "How the tuner searches").
"""

from __future__ import annotations

import math

import numpy as np


def disputed_pick(believed: list, means: np.ndarray, counts: np.ndarray, busy: list) -> int | None:
    """An export pick (best mean reading) that the model disputes -- it believes another measured
    setting truly better, from the readings of their neighbours as well as their own -- measured
    again, or that other setting if it has fewer readings (a lucky reading falls back; an unlucky
    one rises). The objective with the widest such gap goes first; a setting another worker is
    measuring (``busy``) is left alone. ``believed``: per objective, the model's mean at each
    measured setting (log values)."""
    widest = None
    for o, mean in enumerate(believed):
        pick, rival = int(np.argmax(means[:, o])), int(np.argmax(mean))
        if pick == rival:
            continue
        j = rival if counts[rival] < counts[pick] else pick
        gap = float(mean[rival] - mean[pick])
        if not busy[j] and (widest is None or gap > widest[0]):
            widest = (gap, j)
    return None if widest is None else widest[1]


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
