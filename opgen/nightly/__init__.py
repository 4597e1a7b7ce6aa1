"""Nightly re-verification: run (or shard), merge, compare with the previous run, keep history."""

from opgen.nightly.compare import compare
from opgen.nightly.history import History, finalize, merge
from opgen.nightly.run import BUDGETS, NOISE_BAND, Budget, budget, run_nightly
from opgen.nightly.shards import Shard

__all__ = ["BUDGETS", "NOISE_BAND", "Budget", "History", "Shard", "budget", "compare", "finalize", "merge", "run_nightly"]
