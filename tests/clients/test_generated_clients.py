"""The generated Python and TypeScript clients (tools/clients, `python3 tasks.py clients`).

Both are generated from this checkout's OpenAPI document exactly as the command does it,
type-checked (mypy --strict, tsc --noEmit), built, and driven against a real `permitapi dev`
server: a status lookup of a permit created in the portal simulator, a batch, a discovery
search, an ambiguous number (the 300's candidates, typed in both clients) and a keyless demo
lookup with an unauthenticated client, each compared with what the server answers over plain
HTTP. The smoke programs
(smoke_client.py, smoke_client.ts) are type-checked against the generated code too.

The toolchains are installed under .cache/clients/ when missing (pip and `npm ci` against the
package registries) and reused afterwards; if that cannot be done the test fails, it never
skips.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tools.clients import (
    TSCONFIG,
    Toolchain,
    check,
    ensure_toolchain,
    generate,
    readme_scripts,
    run,
)

from permitapi.webhook import signing
from tests.support.dev_server import DevServer, dev_server

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SMOKE_PY = HERE / "smoke_client.py"
SMOKE_TS = HERE / "smoke_client.ts"
SIM = "/_sim/_control"
UNKNOWN = "ZZ-NOT-A-PERMIT"


@pytest.fixture(scope="module")
def toolchain() -> Toolchain:
    return ensure_toolchain()


@pytest.fixture(scope="module")
def generated(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clients")
    generate(out, toolchain)
    check(out, toolchain)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with dev_server("sqlite", tmp_path_factory.mktemp("dev"), "--latency-ms", "0") as running:
        yield running


@pytest.fixture
def http(server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        yield client


def fresh_ladbs_permit(http: httpx.Client) -> str:
    """A permit new to the simulator, so the first lookup of it fetches the portal."""
    digits = str(random.randrange(10**14, 10**15))
    created = http.put(f"{SIM}/permits/ladbs/{digits[:5]}-{digits[5:10]}-{digits[10:]}", json={})
    assert created.status_code == 201, created.text
    return str(created.json()["permit_number"])


def run_python(toolchain: Toolchain, out: Path, args: list[str]) -> str:
    env = {**toolchain.env(), "PYTHONPATH": str(out / "python"), "MYPYPATH": str(out / "python")}
    mypy_cache = toolchain.cache / "mypy"
    run([toolchain.python_bin / "mypy", "--strict", "--cache-dir", mypy_cache, SMOKE_PY], env=env)
    return run([toolchain.python, SMOKE_PY, *args], env=env)


def run_typescript(toolchain: Toolchain, out: Path, args: list[str]) -> str:
    """Compile the smoke program with the client (tsc, strict, CommonJS), then run it."""
    smoke = out / "smoke"
    smoke.mkdir(exist_ok=True)
    shutil.copyfile(SMOKE_TS, smoke / SMOKE_TS.name)
    options = {
        **TSCONFIG["compilerOptions"],
        "declaration": False,
        "rootDir": "..",
        "outDir": "dist",
    }
    tsconfig = {"compilerOptions": options, "files": [SMOKE_TS.name]}
    (smoke / "tsconfig.json").write_text(json.dumps(tsconfig, indent=2))
    env = toolchain.env()
    run([toolchain.node_bin / "tsc", "-p", smoke], env=env)
    node = shutil.which("node")
    assert node is not None, "node is needed for the TypeScript client"
    return run([node, smoke / "dist" / "smoke" / "smoke_client.js", *args], env=env)


def test_both_clients_generate_and_type_check(generated: Path) -> None:
    document = json.loads((generated / "openapi.json").read_text())
    assert (generated / "python" / "permitapi_client" / "api" / "permits").is_dir()
    assert (generated / "python" / "permitapi_client" / "py.typed").exists()
    sdk = (generated / "typescript" / "src" / "sdk.gen.ts").read_text()
    for item in document["paths"].values():
        for operation in item.values():
            assert f"export const {operation['operationId']} = " in sdk
    assert (generated / "typescript" / "package.json").exists()


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_status_batch_and_search(
    language: str, generated: Path, toolchain: Toolchain, server: DevServer, http: httpx.Client
) -> None:
    key = server.keys["pro"]["live_key"]  # the dev server's pro key has the discovery add-on
    number, other = fresh_ladbs_permit(http), fresh_ladbs_permit(http)
    args = [server.base_url, key, number, other, UNKNOWN]
    runner = run_python if language == "python" else run_typescript
    summary: dict[str, Any] = json.loads(runner(toolchain, generated, args).strip())

    status = summary["status"]
    assert status["permit_number"] == number
    assert status["jurisdiction"] == "ladbs"
    assert status["source"] == "live_scrape"  # the client's call fetched the portal
    assert status["status_phase"] in {"pending", "active", "closed", "terminated", "unknown"}
    assert isinstance(status["age_seconds"], int)
    assert str(status["rate_limit_remaining"]).isdigit()

    assert summary["batch"] == {"results": sorted([number, other]), "errors": [UNKNOWN]}

    headers = {"X-API-Key": key}
    direct = http.get(
        "/api/v1/permits/search", params={"city": "Los Angeles", "limit": 5}, headers=headers
    )
    assert direct.status_code == 200, direct.text
    expected = [[hit["jurisdiction"], hit["permit_number"]] for hit in direct.json()["results"]]
    assert summary["search"]["results"] == expected
    assert summary["search"]["result_count"] == len(expected) > 0
    assert {jurisdiction for jurisdiction, _ in expected} == {"ladbs"}

    # The 300, typed in both clients: the same candidates REST answers, in order.
    ambiguous = http.get("/api/v1/permits/BLD24-00123/status", headers=headers).json()
    assert summary["ambiguous"] == {
        "status": 300,
        "candidates": [candidate["slug"] for candidate in ambiguous["candidates"]],
    }
    # A keyless call with a plain (unauthenticated) client: the demo answers.
    assert summary["keyless"] == {"permit_number": "21030-20000-00256", "demo_mode": "true"}


def _signed_delivery() -> dict[str, str]:
    """A delivery signed by the service's own signer (webhook.signing), for the READMEs'
    verification scripts."""
    secret = signing.new_secret()
    body = json.dumps({"event": "status_change", "data": {"new_status": "issued"}})
    timestamp = int(time.time())
    headers = signing.delivery_headers(
        secrets_in_force=[secret],
        delivery_id="8f7e6d5c-4b3a-4c2d-9e1f-0a1b2c3d4e5f",
        event_type="status_change",
        timestamp=timestamp,
        body=body.encode(),
    )
    return {
        "WEBHOOK_SECRET": secret,
        "WEBHOOK_ID": headers["webhook-id"],
        "WEBHOOK_TIMESTAMP": headers["webhook-timestamp"],
        "WEBHOOK_SIGNATURE": headers["webhook-signature"],
        "WEBHOOK_BODY": body,
    }


def _expected_readme_output(outputs: list[str]) -> None:
    """What the five README scripts print, in README order."""
    first, key_header, ambiguous, limited, webhook = outputs
    assert first.startswith("21030-20000-00256 "), first
    status, remaining = key_header.split()[:2]
    assert status == "200"
    assert remaining.isdigit(), key_header
    assert re.match(r"300 \d+ candidates; first: \S+\nwith jurisdiction: \d{3}\n$", ambiguous)
    assert re.match(r"429 after 4 calls: retry after \d+ s\n$", limited), limited
    assert webhook.splitlines() in (["valid", "tampered: False"], ["valid", "tampered: false"])


def test_the_python_readme_scripts_type_check_and_run(
    generated: Path, toolchain: Toolchain, server: DevServer
) -> None:
    scripts = readme_scripts(generated / "python" / "README.md", "python")
    assert len(scripts) == 5
    folder = generated / "readme_python"
    folder.mkdir(exist_ok=True)
    paths = []
    for index, script in enumerate(scripts):
        paths.append(folder / f"example_{index}.py")
        paths[-1].write_text(script)
    env = {**toolchain.env(), "PYTHONPATH": str(generated / "python")}
    env["MYPYPATH"] = env["PYTHONPATH"]
    mypy_cache = toolchain.cache / "mypy"
    run([toolchain.python_bin / "mypy", "--strict", "--cache-dir", mypy_cache, *paths], env=env)
    outputs = []
    for index, path in enumerate(paths):
        # The 429 script needs a fresh free key (3 calls a minute), the others the pro key.
        key = _free_key(server) if index == 3 else server.keys["pro"]["live_key"]
        script_env = {**env, **_signed_delivery(), "PERMITAPI_URL": server.base_url}
        script_env["PERMITAPI_KEY"] = key
        outputs.append(run([toolchain.python, path], env=script_env))
    _expected_readme_output(outputs)


def test_the_typescript_readme_scripts_type_check_and_run(
    generated: Path, toolchain: Toolchain, server: DevServer
) -> None:
    scripts = readme_scripts(generated / "typescript" / "README.md", "ts")
    assert len(scripts) == 5
    folder = generated / "typescript" / "readme"
    folder.mkdir(exist_ok=True)
    names = []
    for index, script in enumerate(scripts):
        names.append(f"example_{index}.ts")
        # The scripts import './src' as if they sat beside it.
        (folder / names[-1]).write_text(script.replace("'./src", "'../src"))
    options = {
        **TSCONFIG["compilerOptions"],
        "declaration": False,
        "rootDir": "..",
        "outDir": "dist",
    }
    (folder / "tsconfig.json").write_text(json.dumps({"compilerOptions": options, "files": names}))
    env = toolchain.env()
    run([toolchain.node_bin / "tsc", "-p", folder], env=env)
    node = shutil.which("node")
    assert node is not None
    outputs = []
    for index, name in enumerate(names):
        key = _free_key(server) if index == 3 else server.keys["pro"]["live_key"]
        script_env = {**env, **_signed_delivery(), "PERMITAPI_URL": server.base_url}
        script_env["PERMITAPI_KEY"] = key
        compiled = folder / "dist" / "readme" / name.replace(".ts", ".js")
        outputs.append(run([node, compiled], env=script_env))
    _expected_readme_output(outputs)


def _free_key(server: DevServer) -> str:
    created = server.cli("keys", "create", "--plan", "free", "--json")
    assert created.returncode == 0, created.stderr
    return str(json.loads(created.stdout)["live_key"])
