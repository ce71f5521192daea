"""deploy/prometheus: the alert rules load in Prometheus's own checker, fire on the series they
are written for (promtool's rule unit tests), read only metrics a real app exposes on /metrics,
and are the alerts docs/operations.md lists."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import yaml

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.kit.clock import FrozenClock

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "permitapi-alerts.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "permitapi-alerts.test.yml"
GUIDE = ROOT / "docs" / "operations.md"
REDIS_URL = "redis://127.0.0.1:6379/0"
# Series Prometheus makes itself for every scrape target, not the app.
PROMETHEUS_SERIES = {"up"}
_SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
_OWN_NAME = re.compile(r"\bpermitapi_[a-z0-9_]+\b")
_MATCHER = re.compile(r'(\w+)\s*(=~|=)\s*"([^"]*)"')


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: `python3 tasks.py test` installs Debian's prometheus"
    return found


def rules() -> list[dict[str, object]]:
    loaded = yaml.safe_load(RULES.read_text())
    return [rule for group in loaded["groups"] for rule in group["rules"]]


def test_promtool_accepts_the_rules_and_their_unit_tests_pass() -> None:
    checked = subprocess.run(
        [promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules())} rules found" in checked.stdout
    tested = subprocess.run(
        [promtool(), "test", "rules", RULE_TESTS.name],
        cwd=RULE_TESTS.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_promtool_refuses_a_broken_rule(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(RULES.read_text().replace("== 2", "== == 2", 1))
    checked = subprocess.run(
        [promtool(), "check", "rules", str(broken)], capture_output=True, text=True, check=False
    )
    assert checked.returncode != 0


def test_the_guide_lists_exactly_the_alerts_of_the_rules() -> None:
    section = GUIDE.read_text().split("\n## Metrics to alert on\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(Permitapi\w+)` \|", section, re.MULTILINE))
    assert listed == {str(rule["alert"]) for rule in rules()}


@pytest.fixture
async def scraped(settings: Settings, clock: FrozenClock) -> AsyncIterator[str]:
    """The /metrics text of a real app with Redis configured (the dependency gauges of both)."""
    application = create_app(settings.model_copy(update={"redis_url": REDIS_URL}), clock=clock)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            await http.get("/healthz")
            response = await http.get("/metrics")
            assert response.status_code == 200
            yield response.text


def exposed(text: str) -> tuple[dict[str, str], dict[str, list[dict[str, str]]], dict[str, str]]:
    """Metric names with their type (TYPE lines; samples' own names as "sample"), each sample
    name's label sets, and each metric's HELP text."""
    names: dict[str, str] = {}
    samples: dict[str, list[dict[str, str]]] = {}
    helps: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names[name] = kind
        elif line.startswith("# HELP "):
            _, _, name, *words = line.split()
            helps[name] = " ".join(words)
        elif line and not line.startswith("#"):
            head = line.rsplit(" ", 1)[0]
            name, _, labels = head.partition("{")
            names.setdefault(name, "sample")
            found = {label: value for label, _, value in _MATCHER.findall(labels)}
            samples.setdefault(name, []).append(found)
    return names, samples, helps


async def test_every_metric_an_alert_reads_is_on_a_live_metrics_page(scraped: str) -> None:
    names, samples, helps = exposed(scraped)
    dependencies = {s["dependency"] for s in samples.get("permitapi_dependency_up", [])}
    assert dependencies == {"database", "redis"}, scraped
    assert 'permitapi_dependency_up{dependency="database"} 1.0' in scraped
    assert 'permitapi_dependency_up{dependency="redis"} 1.0' in scraped
    for rule in rules():
        expression = str(rule["expr"])
        for name, _ in _SELECTOR.findall(expression):
            assert name.startswith("permitapi_") or name in PROMETHEUS_SERIES, (rule["alert"], name)
        own = set(_OWN_NAME.findall(expression))
        assert own or rule["alert"] == "PermitapiDown", rule["alert"]
        missing = own - set(names)
        assert not missing, f"{rule['alert']} reads {sorted(missing)}, not on /metrics"
        for name, matchers in _SELECTOR.findall(expression):
            for label, operator, value in _MATCHER.findall(matchers):
                if label == "job":
                    continue  # the scrape job, added by Prometheus
                wanted = value.split("|") if operator == "=~" else [value]
                for one in wanted:
                    if not re.fullmatch(r"[\w-]+", one):
                        continue  # a pattern such as 5.., not a value
                    if names.get(name) == "gauge":
                        # Set at every scrape: each label value is there.
                        seen = {sample.get(label) for sample in samples.get(name, [])}
                        assert one in seen, f"{rule['alert']}: no {name}{{{label}={one!r}}}"
                    else:
                        # A counter shows a label value once something counted it: the value
                        # must be one its help text names.
                        assert re.search(rf"\b{re.escape(one)}\b", helps.get(name, "")), (
                            f"{rule['alert']}: {name}'s help names no {label} {one!r}"
                        )
