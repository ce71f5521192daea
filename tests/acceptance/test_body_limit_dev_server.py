"""The request body limit on a real `permitapi dev` server (issue 19 item 4): bodies over
PERMITAPI_MAX_REQUEST_BODY_BYTES (1 MiB) are refused with 413 `payload_too_large` while they
stream in, declared (Content-Length) or chunked, before authentication and parsing; ten
concurrent 200 MB bodies leave the server's memory flat and /healthz fast.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.dev_server import DevServer, dev_server
from tests.support.problems import assert_problem

pytestmark = pytest.mark.slow
LIMIT = 1024 * 1024
CURATED = "21030-20000-00256"
BATCH = "/api/v1/permits/batch-status"
CHUNK = b" " * (64 * 1024)  # one buffer, sent again and again: nothing large is built here
HUGE = 200 * 1024 * 1024
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    workdir: Path = tmp_path_factory.mktemp("body-limit")
    with dev_server("sqlite", workdir, "--latency-ms", "0") as started:
        yield started


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


HEAD = b'{"permit_numbers": ["' + CURATED.encode() + b'"]'


def stream(size: int) -> Iterator[bytes]:
    """A batch body of HEAD, `size` bytes of whitespace (whole chunks) and the closing brace."""
    yield HEAD
    sent = 0
    while sent < size:
        yield CHUNK
        sent += len(CHUNK)
    yield b"}"


def padded_batch(size: int) -> bytes:
    """A valid batch body of exactly `size` bytes (JSON whitespace before the closing brace)."""
    head = orjson.dumps({"permit_numbers": [CURATED]})[:-1]
    return head + b" " * (size - len(head) - 1) + b"}"


def test_a_body_of_exactly_the_limit_is_served_one_byte_more_is_413(limited: DevServer) -> None:
    key = {**JSON, "X-API-Key": limited.keys["free"]["sandbox_key"]}
    with httpx.Client(base_url=limited.base_url, timeout=60) as http:
        served = http.post(BATCH, content=padded_batch(LIMIT), headers=key)
        assert served.status_code == 200, served.text
        refused = http.post(BATCH, content=padded_batch(LIMIT + 1), headers=key)
        body = assert_problem(refused, 413, "payload_too_large")
        assert body["max_body_bytes"] == LIMIT


def test_a_10_mb_batch_is_refused_before_authentication(limited: DevServer) -> None:
    ten_mb = padded_batch(10 * 1024 * 1024)
    with httpx.Client(base_url=limited.base_url, timeout=60) as http:
        for headers in (
            {**JSON, "X-API-Key": limited.keys["pro"]["live_key"]},
            {**JSON, "X-API-Key": "sk_live_not_a_key"},  # 401 if the key were looked at first
            JSON,
        ):
            refused = http.post(BATCH, content=ten_mb, headers=headers)
            assert_problem(refused, 413, "payload_too_large")
            assert "x-ratelimit-limit" not in refused.headers
        # Nothing was metered: the live key's month is untouched.
        usage = http.get("/api/v1/usage", headers={"X-API-Key": limited.keys["pro"]["live_key"]})
        assert usage.json()["lookup"]["used"] == 0


def test_chunked_bodies_are_counted_as_they_arrive(limited: DevServer) -> None:
    key = {**JSON, "X-API-Key": limited.keys["free"]["sandbox_key"]}
    with httpx.Client(base_url=limited.base_url, timeout=60) as http:
        small = http.post(BATCH, content=stream(100 * 1024), headers=key)  # chunked: no length
        assert small.status_code == 200, small.text
        refused = http.post(BATCH, content=stream(2 * LIMIT), headers=key)
        assert_problem(refused, 413, "payload_too_large")
        # The tool server reads its bodies through the same limit.
        refused = http.post("/mcp", content=stream(2 * LIMIT), headers=JSON)
        assert_problem(refused, 413, "payload_too_large")
        # The connection is still usable after a refused body.
        assert http.get("/healthz").status_code == 200


def test_ten_concurrent_200_mb_bodies_leave_memory_flat_and_healthz_fast(
    limited: DevServer,
) -> None:
    base = limited.base_url
    with httpx.Client(base_url=base, timeout=10) as warm:
        for _ in range(20):
            assert warm.get("/healthz").status_code == 200
    before = rss_kib(limited.pid)
    peak = before
    latencies: list[float] = []
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        with httpx.Client(base_url=base, timeout=30) as probe:
            while not done.is_set():
                peak = max(peak, rss_kib(limited.pid))
                began = time.perf_counter()
                assert probe.get("/healthz").status_code == 200
                latencies.append(time.perf_counter() - began)
                time.sleep(0.05)

    def send(index: int) -> httpx.Response:
        with httpx.Client(base_url=base, timeout=300) as http:
            # Half declare their length (refused at once), half are chunked (refused at 1 MiB).
            length = {"Content-Length": str(len(HEAD) + HUGE + 1)} if index % 2 else {}
            headers = {**JSON, **length}
            return http.post(BATCH, content=stream(HUGE), headers=headers)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with ThreadPoolExecutor(max_workers=10) as pool:
            responses = list(pool.map(send, range(10)))
    finally:
        done.set()
        watcher.join(timeout=60)
    for response in responses:
        assert_problem(response, 413, "payload_too_large")
    grown_mib = (peak - before) / 1024
    assert grown_mib < 64, f"RSS grew {grown_mib:.0f} MiB ({before} -> {peak} KiB)"
    assert latencies, "no /healthz probe ran"
    assert max(latencies) < 1.0, f"/healthz took up to {max(latencies):.2f} s"
