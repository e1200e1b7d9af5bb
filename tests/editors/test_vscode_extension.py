"""The VS Code extension (editors/vscode): its type check, unit tests and packaging through npm, its
settings against the server's, and the real-editor test (code-server + headless Chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from quokka.server.settings import _FIELDS, Settings, parse_settings

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
NPM = shutil.which("npm")
needs_npm = pytest.mark.skipif(NPM is None, reason="npm not installed (the extension is built with Node/npm)")
CLIENT_ONLY = {"quokka.serverCommand", "quokka.trace.server"}
VSIX_FILES = {"extension/package.json", "extension/readme.md", "extension/changelog.md",
              "extension/out/extension.js", "extension/media/screenshot.png"}


def manifest() -> dict:
    return json.loads((EXT / "package.json").read_text())


def npm(*args: str, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert NPM is not None
    return subprocess.run([NPM, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)


def output(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"


@pytest.fixture(scope="module")
def installed() -> Path:
    """editors/vscode with its node_modules (npm ci from the lock file, once)."""
    if not (EXT / "node_modules" / ".package-lock.json").is_file():
        done = npm("ci", "--no-audit", "--no-fund", "--loglevel=error", timeout=600)
        assert done.returncode == 0, output(done)
    return EXT


@needs_npm
@pytest.mark.timeout(600)
def test_type_check_and_unit_tests(installed):
    typecheck = npm("run", "typecheck", timeout=300)
    assert typecheck.returncode == 0, output(typecheck)
    unit = npm("test", timeout=300)
    assert unit.returncode == 0, output(unit)
    passed = re.search(r"^# pass (\d+)$", unit.stdout, re.M)
    assert passed is not None and int(passed.group(1)) >= 14, output(unit)
    assert re.search(r"^# fail 0$", unit.stdout, re.M), output(unit)


@needs_npm
@pytest.mark.timeout(600)
def test_package_makes_a_vsix_of_the_bundle_alone(installed):
    vsix = installed / "out" / "quokka.vsix"
    vsix.unlink(missing_ok=True)
    done = npm("run", "package", timeout=300)
    assert done.returncode == 0, output(done)
    with zipfile.ZipFile(vsix) as archive:
        names = {n for n in archive.namelist() if n.startswith("extension/")}
        packaged = json.loads(archive.read("extension/package.json"))
        bundle = archive.read("extension/out/extension.js").decode()
    assert names == VSIX_FILES
    assert packaged["main"] == "./out/extension.js" and packaged["version"] == manifest()["version"]
    assert 'require("vscode")' in bundle  # the one module left outside the bundle
    assert "vscode-languageclient" not in re.findall(r'require\("([^"]+)"\)', bundle)


def test_engines_match_the_types_and_the_language_client():
    pkg = manifest()
    engine = re.fullmatch(r"\^(\d+)\.(\d+)\.\d+", pkg["engines"]["vscode"])
    types = re.fullmatch(r"~(\d+)\.(\d+)\.\d+", pkg["devDependencies"]["@types/vscode"])
    assert engine is not None and types is not None
    assert engine.groups() == types.groups(), "engines.vscode and @types/vscode must name the same release"
    assert pkg["dependencies"]["vscode-languageclient"].startswith("^11.")
    client = EXT / "node_modules" / "vscode-languageclient" / "package.json"
    if client.is_file():
        wanted = re.fullmatch(r"\^(\d+)\.(\d+)\.\d+", json.loads(client.read_text())["engines"]["vscode"])
        assert wanted is not None
        assert tuple(map(int, engine.groups())) >= tuple(map(int, wanted.groups()))


def test_activation_and_languages():
    pkg = manifest()
    assert pkg["activationEvents"] == ["onLanguage:c"]
    (language,) = pkg["contributes"]["languages"]
    assert language["id"] == "c" and {".c", ".i"} <= set(language["extensions"])
    commands = {c["command"] for c in pkg["contributes"]["commands"]}
    assert commands == {"quokka.verifyCurrentFile", "quokka.verifyCurrentFileWithModel",
                        "quokka.restartServer", "quokka.showOutput"}
    # the server's own commands are registered by the language client: the extension must not take them
    assert not commands & {"quokka.verify", "quokka.verifyWithModel", "quokka.copyInvariant",
                           "quokka.showResult"}


def test_settings_mirror_the_server_settings():
    properties = manifest()["contributes"]["configuration"]["properties"]
    assert set(properties) - CLIENT_ONLY == {f"quokka.{key}" for key in _FIELDS}
    source = (EXT / "src" / "settings.ts").read_text()
    keys_ts = re.search(r"SERVER_KEYS: readonly string\[\] = \[(.*?)\];", source, re.S)
    assert keys_ts is not None
    assert sorted(re.findall(r'"(\w+)"', keys_ts.group(1))) == sorted(_FIELDS)


def test_setting_defaults_are_the_server_defaults():
    """The defaults, with unset values left out as the extension sends them, parse to Settings()."""
    properties = manifest()["contributes"]["configuration"]["properties"]
    sent = {name.removeprefix("quokka."): spec["default"] for name, spec in properties.items()
            if name not in CLIENT_ONLY and spec["default"] not in (None, "")}
    settings, problems = parse_settings(sent)
    assert problems == ()
    assert settings == Settings()


def e2e_missing() -> str | None:
    if os.environ.get("QUOKKA_E2E") == "0":
        return "QUOKKA_E2E=0"
    if NPM is None:
        return "npm not installed"
    check = subprocess.run(["bash", str(EXT / "e2e" / "run.sh"), "--check"], capture_output=True, text=True,
                           check=False)
    if check.returncode == 0 or os.environ.get("QUOKKA_E2E") == "1":
        return None
    return (f"{check.stderr.strip()}: `npm run e2e` in editors/vscode installs them once (~5 min) and runs "
            "the real-editor test; QUOKKA_E2E=1 (scripts/test.sh) makes this test do the same")


@pytest.mark.timeout(900)
def test_real_editor_code_server(installed, tmp_path):
    missing = e2e_missing()
    if missing is not None:
        pytest.skip(missing)
    quokka = shutil.which("quokka", path=str(Path(sys.executable).parent))
    env = {**os.environ, "QUOKKA_E2E_OUT": str(tmp_path / "screenshots")}
    if quokka is not None:
        env["QUOKKA_E2E_SERVER"] = quokka
    done = subprocess.run(["bash", "e2e/run.sh"], cwd=EXT, capture_output=True, text=True, timeout=840,
                          env=env, check=False)
    assert done.returncode == 0, output(done)
    assert re.search(r"^22 passed, 0 failed$", done.stdout, re.M), output(done)
    # issue 19: the hint is the minimal certificate, and a wrong ACSL invariant is refuted on its line
    hint = re.search(r"^PASS the hint is the minimal certificate: (.*)$", done.stdout, re.M)
    assert hint is not None and hint.group(1) == '"⊢ s == 2*i ∧ s <= 2*n"', output(done)
    refuted = re.search(r"^PASS Problems panel: the annotation is refuted, .*?: \"(.*)\"$", done.stdout, re.M)
    assert refuted is not None, output(done)
    assert refuted.group(1).startswith("loop invariant s == 3*i is refuted"), refuted.group(1)
    assert refuted.group(1).endswith("[Ln 9, Col 5]"), refuted.group(1)
    shots = sorted(p.name for p in (tmp_path / "screenshots").glob("*.png"))
    assert shots == ["1-linear-hint-and-lens.png", "2-linear-hover.png", "3-sum-bug-problems.png",
                     "4-refuted-annotation-problems.png", "5-refuted-annotation-hover.png",
                     "6-no-server-notification.png"]
