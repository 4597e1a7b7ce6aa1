"""Where a project's specs, prompts, registry and run records live."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Project:
    root: Path

    @classmethod
    def locate(cls, root: Path | None = None) -> "Project":
        """``--root``, else $OPGEN_ROOT, else the current directory if it has specs/, else the checkout."""
        if root is not None:
            return cls(Path(root).resolve())
        if env := os.environ.get("OPGEN_ROOT"):
            return cls(Path(env).resolve())
        if (Path.cwd() / "specs").is_dir():
            return cls(Path.cwd().resolve())
        return cls(PACKAGE_ROOT)

    @property
    def specs(self) -> Path:
        return self.root / "specs"

    @property
    def prompts(self) -> Path:
        local = self.root / "prompts"
        return local if local.is_dir() else PACKAGE_ROOT / "prompts"

    @property
    def generated(self) -> Path:
        return self.root / "generated"

    @property
    def recordings(self) -> Path:
        return self.generated / "recordings"

    @property
    def reports(self) -> Path:
        """The nightly results and the report site (build output, not committed)."""
        return self.root / "reports"

    @property
    def runs(self) -> Path:
        """Transcripts of runs that admitted nothing (not committed)."""
        return self.root / "runs"
