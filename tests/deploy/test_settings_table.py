"""docs/operations.md's settings table and `Settings` name the same settings, both ways."""

from __future__ import annotations

import re
from pathlib import Path

from permitapi.config import Settings

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
_ROW = re.compile(r"^\|\s*`(PERMITAPI_[A-Z0-9_]+)`\s*\|")


def documented_settings(text: str) -> list[str]:
    """The variables of the table under `## Settings`, in order."""
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for line in section.splitlines() if (match := _ROW.match(line))]


def setting_variables() -> set[str]:
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return {prefix.upper() + name.upper() for name in Settings.model_fields}


def test_every_setting_is_in_the_table_and_every_row_is_a_setting() -> None:
    documented = documented_settings(GUIDE.read_text())
    duplicated = sorted({name for name in documented if documented.count(name) > 1})
    assert not duplicated, f"documented twice in docs/operations.md: {duplicated}"
    undocumented = sorted(setting_variables() - set(documented))
    assert not undocumented, (
        f"settings missing from the table in docs/operations.md (## Settings): {undocumented}"
    )
    unknown = sorted(set(documented) - setting_variables())
    assert not unknown, (
        f"docs/operations.md documents variables that are not fields of Settings "
        f"(src/permitapi/config.py): {unknown}"
    )


def test_the_table_reader_sees_a_missing_and_an_invented_row() -> None:
    """The check above is not vacuous: the reader finds rows, and a change shows up."""
    text = GUIDE.read_text()
    documented = documented_settings(text)
    assert len(documented) >= 20
    without = text.replace("| `PERMITAPI_ACCESS_LOG` |", "| ACCESS_LOG |")
    assert "PERMITAPI_ACCESS_LOG" not in documented_settings(without)
    invented = text.replace(
        "| `PERMITAPI_ACCESS_LOG` |",
        "| `PERMITAPI_NO_SUCH_SETTING` | x | y |\n| `PERMITAPI_ACCESS_LOG` |",
    )
    assert "PERMITAPI_NO_SUCH_SETTING" in documented_settings(invented)
    assert "PERMITAPI_NO_SUCH_SETTING" not in setting_variables()
