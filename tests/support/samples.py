"""Where the real portal samples are: `../shared/portal-samples` beside the checkout (as on CI),
or PERMITAPI_SAMPLES_DIR. Parser tests read them in place, so a sample added there is picked
up (and must be handled) without copying."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def samples_dir() -> Path:
    candidates = [
        os.environ.get("PERMITAPI_SAMPLES_DIR", ""),
        str(REPO_ROOT.parent / "shared" / "portal-samples"),
        "/work/shared/portal-samples",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise FileNotFoundError(
        "portal samples not found: set PERMITAPI_SAMPLES_DIR or keep ../shared beside the repo"
    )


def family_samples(family: str) -> list[Path]:
    """Every sample file of a family (ladbs, epicla, aca), sorted."""
    return sorted(p for p in (samples_dir() / family).iterdir() if p.is_file())


def sample(family: str, name: str) -> Path:
    path = samples_dir() / family / name
    if not path.is_file():
        raise FileNotFoundError(path)
    return path
