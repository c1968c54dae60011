"""The search-efficiency benchmark's parts (``benchmarks/search_efficiency.py`` is its command line).

* :mod:`.targets`: what a study is run against -- a simulator profile or a landscape table -- and the
  truth it is scored on (every setting's true objective values, the optima, the true front);
* :mod:`.runs`: one run (a whole study on the real engine, ``server.backend: model``, in-memory
  storage) and its scores, among them the true value of what ``tuner study export`` would return
  after every launch;
* :mod:`.strategies`: the strategies compared (the study file's sampler and seed trials).
"""
