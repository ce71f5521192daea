"""Where the real portal captures are: `tests/fixtures/<family>/`, inside the repository.

Every capture a test reads is kept there with its origin in that folder's README.md, so a
clone on its own runs every parser test; nothing here looks outside the checkout. Files named
`*_HANDWRITTEN.*` are shapes written by us where no real capture exists: they are fixtures,
not captures, and `family_samples` leaves them out.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"


def samples_dir() -> Path:
    return FIXTURES


def is_capture(path: Path) -> bool:
    return path.is_file() and path.name != "README.md" and "_HANDWRITTEN" not in path.name


def family_samples(family: str) -> list[Path]:
    """Every real capture of a family (ladbs, epicla, aca), sorted."""
    return sorted(p for p in (FIXTURES / family).iterdir() if is_capture(p))


def sample(family: str, name: str) -> Path:
    path = FIXTURES / family / name
    if not path.is_file():
        raise FileNotFoundError(path)
    return path
