"""The EAGLE-3 search space: ranges from a search-space file, filtered through SGLang's rules.

:class:`SearchSpace` answers three questions for the study engine and the CLI: what SGLang really
runs for a proposal (:meth:`SearchSpace.resolve`), which distinct effective settings the space
holds (:meth:`SearchSpace.effective_configs`), and the Optuna distributions to sample from.
The rules themselves live in :mod:`tuner.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import SPEC_PARAMS, SearchSpaceConfig, load_space
from .rules import Resolution, ServerContext, SpecConfig, resolve


def context_from_args(algorithm: str | None, server_args: dict) -> ServerContext:
    """The :class:`ServerContext` the rules need, read from server arguments (underscore names)."""
    return ServerContext(
        speculative_algorithm=algorithm,
        attention_backend=server_args.get("attention_backend"),
        page_size=int(server_args.get("page_size") or 1),
        use_rejection_sampling=bool(server_args.get("speculative_use_rejection_sampling", False)),
    )


@dataclass(frozen=True)
class SearchSpace:
    """A validated search space plus the server arguments the rules depend on."""

    config: SearchSpaceConfig
    source: str = "<search space>"

    @classmethod
    def load(cls, path: str | Path) -> "SearchSpace":
        return cls(load_space(path), str(path))

    @property
    def context(self) -> ServerContext:
        return context_from_args(self.config.algorithm, self.config.fixed)

    def values(self, name: str) -> list[int]:
        return self.config.values(name)

    def resolve(self, requested: SpecConfig) -> Resolution:
        return resolve(requested, self.context)

    def contains(self, cfg: SpecConfig) -> bool:
        """Whether ``cfg`` lies within the file's ranges (as requested, before rewrites)."""
        return all(
            value in self.values(name)
            for name, value in zip(SPEC_PARAMS, (cfg.num_steps, cfg.eagle_topk, cfg.num_draft_tokens))
        )

    def proposals(self):
        """Every requested setting in the ranges, with its resolution (the full Cartesian product)."""
        for steps in self.values("speculative_num_steps"):
            for topk in self.values("speculative_eagle_topk"):
                for draft in self.values("speculative_num_draft_tokens"):
                    cfg = SpecConfig(steps, topk, draft)
                    yield cfg, self.resolve(cfg)

    def effective_configs(self) -> list[SpecConfig]:
        """The distinct settings SGLang would really run, valid ones only, sorted."""
        return sorted({res.effective for _, res in self.proposals() if res.ok})

    def distributions(self) -> dict:
        """Optuna distributions for the three flags (integers, or categorical for choices)."""
        import optuna.distributions as d

        from .config import IntRange

        out = {}
        for name in SPEC_PARAMS:
            p = self.config.params[name]
            if isinstance(p, IntRange):
                out[name] = d.IntDistribution(p.low, p.high, step=p.step)
            else:
                out[name] = d.CategoricalDistribution(list(p.choices))
        return out
