"""The bench scripts run end to end on SQLite (request_path on PostgreSQL too): they are not
measured here. Each runs every phase and prints every line once, with the smallest sizes its
options allow: one round, 0.1 s warm-ups, a short settle, and for batch_misses a fast LADBS
rate (`--ladbs-rate`), so that its waits for a refilled token bucket take milliseconds instead
of seconds. The scripts' defaults are the real bench (README, "Benchmarks")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
# Scripts with a part that runs on PostgreSQL only (request_path: two API processes vs one).
BOTH_ENGINES = {"request_path.py"}
RUNS = {
    "cached_lookup.py": ["--duration", "0.3", "--connections", "4", "--warmup", "0.1"],
    "batch_misses.py": ["--latency", "0.01", "--rounds", "1", "--ladbs-rate", "250"],
    "browser_fetch.py": ["--n", "2"],
    "single_flight.py": ["--n", "6", "--latency", "0.2"],
    "request_path.py": [
        "--duration",
        "0.3",
        "--connections",
        "4",
        "--requests",
        "200",
        "--rounds",
        "1",
        "--warmup",
        "0.1",
    ],
    "webhook_delivery.py": [
        "--events",
        "100",
        "--latency-events",
        "40",
        "--feed-rows",
        "2000",
        "--feed-key-rows",
        "600",
        "--settle",
        "0.5",
        "--page-rounds",
        "5",
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(RUNS))
def test_bench_script_runs(script: str, database_url: str) -> None:
    engine = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    if engine != "sqlite" and script not in BOTH_ENGINES:
        pytest.skip("one backend is enough for a smoke run")
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--db", engine, *RUNS[script]],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(script.removesuffix(".py") + ": ")
    assert "(target " in last
