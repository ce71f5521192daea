"""Generated API clients: `python3 tasks.py clients` (or `.venv/bin/python -m tools.clients`).

From the app's OpenAPI document, built offline by `permitapi.app.create_app()` (no server, no
database), it writes under clients/ (git-ignored; the generated code is never committed):

    clients/openapi.json    the document both clients were generated from
    clients/python/         package `permitapi_client` (openapi-python-client), then
                            type-checked with `mypy --strict`; README.md from readme/
    clients/typescript/     an SDK with one function per operationId (@hey-api/openapi-ts,
                            fetch client bundled, no runtime dependency), then type-checked
                            with `tsc --noEmit`; `npm run build` there emits dist/;
                            README.md from readme/

The generators run from their own pinned toolchains under .cache/clients/ (git-ignored, never
the service's .venv): a virtualenv installed from requirements.txt beside this file, and
node_modules installed by `npm ci` from package.json and package-lock.json beside it. Each is
installed when missing or when its pins changed (a stamp holds the pins' digest), under a file
lock, so a second run installs nothing and two concurrent runs do not collide. Anything missing
(npm, the registry) is an error, never a silent skip.

tests/clients/test_generated_clients.py generates both clients the same way and runs a status
lookup, a batch and a discovery search with each against a real dev server.
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_OUT = ROOT / "clients"
DEFAULT_CACHE = ROOT / ".cache" / "clients"
REQUIREMENTS = HERE / "requirements.txt"
PACKAGE_JSON = HERE / "package.json"
PACKAGE_LOCK = HERE / "package-lock.json"
PYTHON_CONFIG = HERE / "openapi-python-client.yaml"
README_PYTHON = HERE / "readme" / "python.md"
README_TYPESCRIPT = HERE / "readme" / "typescript.md"
PYTHON_PACKAGE = "permitapi_client"
TYPESCRIPT_PACKAGE = "permitapi-client"

# How the TypeScript client compiles: CommonJS output (relative imports without extensions
# resolve under node), fetch and its types from the DOM library, no ambient @types.
TSCONFIG: dict[str, Any] = {
    "compilerOptions": {
        "target": "ES2022",
        "module": "commonjs",
        "moduleResolution": "node10",
        "lib": ["ES2022", "DOM", "DOM.Iterable"],
        "types": [],
        "strict": True,
        "declaration": True,
        "skipLibCheck": True,
        "rootDir": "src",
        "outDir": "dist",
    },
    "include": ["src"],
}


class ToolError(RuntimeError):
    """A toolchain install, generator or type-checker failed (its output is the message)."""


@dataclass(frozen=True)
class Toolchain:
    python_bin: Path  # the generator virtualenv's bin/: openapi-python-client, mypy, ruff
    node_bin: Path  # node_modules/.bin: openapi-ts, tsc
    cache: Path

    @property
    def python(self) -> Path:
        return self.python_bin / "python"

    def env(self) -> dict[str, str]:
        """The environment for the tools: their own bin directories first on PATH (the
        Python generator's post-hooks call `ruff`)."""
        path = os.pathsep.join([str(self.python_bin), str(self.node_bin), os.environ["PATH"]])
        return {**os.environ, "PATH": path, "VIRTUAL_ENV": str(self.python_bin.parent)}


def run(
    args: Sequence[str | Path], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> str:
    """Run a tool; its stdout on success, a ToolError with all its output otherwise."""
    command = [str(arg) for arg in args]
    try:
        done = subprocess.run(  # noqa: S603 - the toolchain's own executables
            command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"{' '.join(command)}: {exc}") from exc
    if done.returncode != 0:
        raise ToolError(
            f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}".strip()
        )
    return done.stdout


def _digest(*files: Path) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    return digest.hexdigest()


@contextmanager
def _locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _ensure_python(cache: Path) -> Path:
    env_dir = cache / "python"
    bin_dir = env_dir / "bin"
    stamp = env_dir / ".permitapi-installed"
    wanted = _digest(REQUIREMENTS)
    ready = [bin_dir / name for name in ("python", "openapi-python-client", "mypy", "ruff")]
    if stamp.exists() and stamp.read_text() == wanted and all(p.exists() for p in ready):
        return bin_dir
    print(f"installing the Python client toolchain into {env_dir}", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    pip: list[str | Path] = [bin_dir / "python", "-m", "pip", "--disable-pip-version-check", "-q"]
    run([*pip, "install", "-r", REQUIREMENTS])
    stamp.write_text(wanted)
    return bin_dir


def _ensure_node(cache: Path) -> Path:
    node_dir = cache / "node"
    bin_dir = node_dir / "node_modules" / ".bin"
    stamp = node_dir / ".permitapi-installed"
    wanted = _digest(PACKAGE_JSON, PACKAGE_LOCK)
    ready = [bin_dir / "openapi-ts", bin_dir / "tsc"]
    if stamp.exists() and stamp.read_text() == wanted and all(p.exists() for p in ready):
        return bin_dir
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise ToolError("node and npm are needed for the TypeScript client (Node.js 20.19+)")
    print(f"installing the TypeScript client toolchain into {node_dir}", flush=True)
    node_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PACKAGE_JSON, node_dir / "package.json")
    shutil.copyfile(PACKAGE_LOCK, node_dir / "package-lock.json")
    run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=node_dir)
    stamp.write_text(wanted)
    return bin_dir


def ensure_toolchain(cache: Path = DEFAULT_CACHE) -> Toolchain:
    """Both generators and type-checkers, installed into `cache` when missing or stale."""
    with _locked(cache):
        return Toolchain(_ensure_python(cache), _ensure_node(cache), cache)


def openapi_document() -> dict[str, Any]:
    """The document /openapi.json serves, built offline from this checkout's app."""
    source = str(ROOT / "src")
    if source not in sys.path:
        sys.path.insert(0, source)
    from permitapi.app import create_app

    document: dict[str, Any] = create_app().openapi()
    return document


def _typescript_version() -> str:
    package = json.loads(PACKAGE_JSON.read_text())
    return str(package["devDependencies"]["typescript"])


def _operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for item in document.get("paths", {}).values():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch"):
                yield operation


def readme_scripts(readme: Path, fence: str) -> list[str]:
    """The code blocks of a client README opened with ```<fence> (each a whole script)."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in readme.read_text().splitlines():
        if current is None and line.strip() == f"```{fence}":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def keyless_optional(document: dict[str, Any]) -> dict[str, Any]:
    """The document for openapi-python-client: an operation whose key is optional (security
    `[{ApiKeyAuth: []}, {}]`: the keyless demo's status and batch) loses its security, because
    the generator asks for an AuthenticatedClient whenever an operation lists any; without it
    the function takes `AuthenticatedClient | Client`, and an AuthenticatedClient still sends
    its key (the header is set on the client, not per operation)."""
    shaped = copy.deepcopy(document)
    for operation in _operations(shaped):
        if {} in operation.get("security", []):
            del operation["security"]
    return shaped


def type_multiple_choices(types_file: Path, document: dict[str, Any]) -> None:
    """@hey-api/openapi-ts leaves 3xx answers out of an operation's `Errors`, so a 300's
    candidates reached `error` typed as another problem and `error.candidates` failed tsc. The
    fetch client does hand a 300 to `error` (the response is not ok): add it to the type."""
    text = types_file.read_text()
    for operation in _operations(document):
        if "300" not in operation.get("responses", {}):
            continue
        op_id = operation["operationId"]
        opening = f"export type {op_id[0].upper()}{op_id[1:]}Errors = {{\n"
        if opening not in text:
            raise ToolError(f"{types_file.name}: no {opening.strip()} to add the 300 to")
        text = text.replace(
            opening,
            f"{opening}    /**\n     * Ambiguous: several jurisdictions match\n     */\n"
            "    300: MultipleJurisdictionsProblem;\n",
        )
    types_file.write_text(text)


def generate(out: Path, toolchain: Toolchain, document: dict[str, Any] | None = None) -> None:
    """Write out/openapi.json, out/python and out/typescript (replacing earlier output)."""
    document = document if document is not None else openapi_document()
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "openapi.json"
    spec.write_text(json.dumps(document, indent=2) + "\n")
    env = toolchain.env()
    python_out = out / "python"
    python_spec = out / "openapi.python.json"
    python_spec.write_text(json.dumps(keyless_optional(document), indent=2) + "\n")
    run(
        [
            toolchain.python_bin / "openapi-python-client",
            "generate",
            "--path", python_spec,
            "--output-path", python_out,
            "--config", PYTHON_CONFIG,
            "--meta", "poetry",
            "--overwrite",
            "--fail-on-warning",
        ],
        cwd=out,
        env=env,
    )  # fmt: skip
    typescript_out = out / "typescript"
    if typescript_out.exists():
        shutil.rmtree(typescript_out)
    run(
        [
            toolchain.node_bin / "openapi-ts",
            "--input", spec,
            "--output", typescript_out / "src",
            "--client", "@hey-api/client-fetch",
            "--silent",
            "--no-log-file",
        ],
        cwd=out,
        env=env,
    )  # fmt: skip
    type_multiple_choices(typescript_out / "src" / "types.gen.ts", document)
    shutil.copyfile(README_PYTHON, python_out / "README.md")
    shutil.copyfile(README_TYPESCRIPT, typescript_out / "README.md")
    package = {
        "name": TYPESCRIPT_PACKAGE,
        "version": document["info"]["version"],
        "description": "TypeScript client of the permitapi HTTP API (generated; do not edit)",
        "private": True,
        "main": "dist/index.js",
        "types": "dist/index.d.ts",
        "scripts": {"build": "tsc -p .", "typecheck": "tsc -p . --noEmit"},
        "devDependencies": {"typescript": _typescript_version()},
    }
    (typescript_out / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    (typescript_out / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2) + "\n")


def check(out: Path, toolchain: Toolchain) -> None:
    """Type-check both generated clients: mypy --strict and tsc --noEmit."""
    env = toolchain.env()
    mypy_cache = toolchain.cache / "mypy"
    run(
        [toolchain.python_bin / "mypy", "--strict", "--cache-dir", mypy_cache, PYTHON_PACKAGE],
        cwd=out / "python",
        env=env,
    )
    run([toolchain.node_bin / "tsc", "-p", out / "typescript", "--noEmit"], env=env)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 tasks.py clients",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: clients/")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="toolchains")
    parser.add_argument("--no-check", action="store_true", help="skip mypy and tsc")
    args = parser.parse_args(argv)
    try:
        toolchain = ensure_toolchain(args.cache)
        generate(args.out, toolchain)
        if not args.no_check:
            check(args.out, toolchain)
    except ToolError as error:
        print(error, file=sys.stderr)
        return 1
    for name in ("openapi.json", "python", "typescript"):
        print(f"wrote {args.out / name}")
    return 0
