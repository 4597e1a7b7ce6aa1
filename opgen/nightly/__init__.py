"""Nightly re-verification: run (or shard), merge, compare with the previous run, keep history."""

from .compare import compare
from .history import History, finalize, merge
from .run import BUDGETS, NOISE_BAND, Budget, budget, run_nightly
from .shards import Shard

__all__ = ["BUDGETS", "NOISE_BAND", "Budget", "History", "Shard", "budget", "compare", "finalize", "merge", "run_nightly"]
