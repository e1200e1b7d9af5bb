"""Settings, the result cache, the verifier runner and the text scanner, each on its own."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest
from lsp_samples import BENCHMARKS, COHENCU, LINEAR, linear_true, unknown
from lsprotocol import types as lsp
from quokka.invariants.llm.settings import ModelSettings
from quokka.server.cache import ResultCache, cache_key, cacheable
from quokka.server.diagnostics import diagnostics
from quokka.server.model import STATUS_ERROR, STATUS_FAILED, STATUS_OK, Outcome, bad_input, failed
from quokka.server.runner import Job, Runner, parse_output, task_data_model
from quokka.server.settings import DEFAULT_COMMAND, Settings, parse_settings
from quokka.server.text import SourceText, assertion_sites, functions, mask, mentioned_at
from quokka.verifier.options import Options
from quokka.verifier.verdict.results import PARSE_ERROR, UNSUPPORTED_FEATURE, Diagnostic, Verdict

FAKE = (sys.executable, str(Path(__file__).with_name("fake_verify.py")))
BENCH = BENCHMARKS

# ----------------------------------------------------------------------------- settings


def test_settings_from_the_quokka_section_with_problems_reported():
    settings, problems = parse_settings({"quokka": {
        "timeout": 20, "proposers": "dynamic, llm", "verifyOn": "change", "showProvenHints": False,
        "samples": 4, "endpoint": "http://127.0.0.1:8000/v1", "debounceMs": -1, "command": "rm -rf /"}})
    assert settings.options.timeout_s == 20.0 and settings.options.proposers == ("dynamic", "llm")
    assert settings.model == ModelSettings(endpoint="http://127.0.0.1:8000/v1", samples=4)
    assert settings.verify_on == "change" and settings.show_proven_hints is False
    assert settings.debounce_ms == Settings().debounce_ms
    assert len(problems) == 2
    assert any("debounceMs" in p for p in problems) and any("command: unknown" in p for p in problems)
    assert settings.command == DEFAULT_COMMAND  # the editor's settings never choose what runs
    assert parse_settings(None) == (Settings(), ())


def test_settings_are_checked_by_the_layers_they_belong_to():
    settings, problems = parse_settings({"engines": ["bmc", "magic"], "dataModel": "LP32", "samples": True})
    assert settings == Settings()
    assert problems == (
        "quokka.engines: unknown engine(s): magic (known: houdini, bmc, spacer, testing, bitblast, fuzz, "
        "execute, algebra, twoquery, inductive, kind) (ignored)",
        "quokka.dataModel: data model must be ILP32 or LP64, got 'LP32' (ignored)",
        "quokka.samples: expected a whole number >= 1 and <= 1000000, got True (ignored)",
    )
    chosen, _ = parse_settings({"engines": "bmc", "dataModel": "ILP32", "model": "m"})
    cleared, problems = parse_settings({"engines": [], "dataModel": "", "model": ""}, chosen)
    assert chosen.options.engines == ("bmc",) and chosen.has_model
    assert cleared == Settings() and problems == ()


def test_verify_args_with_and_without_model():
    settings = Settings(Options(timeout_s=20), ModelSettings(model="/models/tiny", samples=2))
    proposers = ("--proposers", "dynamic,arrays,annotations,accel")
    assert settings.verify_args() == ("--json", "--timeout", "20", *proposers)
    with_model = settings.verify_args(with_model=True, data_model="ILP32")
    assert with_model == ("--json", "--timeout", "20", "--proposers", "dynamic,arrays,annotations,accel,llm",
                          "--data-model", "ILP32", "--model", "/models/tiny", "--samples", "2")
    assert Settings(Options(proposers=())).verify_args()[-1] == "none"
    assert Settings(Options(engines=("bmc",))).verify_args()[-2:] == ("--engines", "bmc")
    assert DEFAULT_COMMAND[-1] == "quokka.server.verify_main"


# ----------------------------------------------------------------------------- cache


def test_cache_round_trip_and_what_is_cached(tmp_path):
    cache = ResultCache(tmp_path / "sub" / "lsp.sqlite")
    key = cache_key(LINEAR, DEFAULT_COMMAND, ("--json",))
    assert cache.get(key) is None
    assert cache.put(key, linear_true())
    hit = cache.get(key)
    assert hit is not None and hit.from_cache and hit.result == linear_true().result
    assert not cacheable(unknown("timeout: nothing decided in 20 s"))
    pointers = Diagnostic("f.c", 3, 4, "unsupported feature", "unsupported feature: pointers")
    assert cacheable(unknown(pointers.reason, cause=pointers))  # a fact of the text
    assert not cacheable(unknown("bmc: f.c:3:4: unsupported feature: pointers; spacer: timeout"))
    assert cacheable(Outcome(unknown("f.c:1:1: parse error").result, "f.c", STATUS_ERROR))
    bad = bad_input(Diagnostic("f.c", 1, 1, PARSE_ERROR, "parse error"), "f.c")
    assert cacheable(bad) and cache.put("bad", bad)
    assert cache.get("bad") == Outcome(bad.result, "f.c", STATUS_ERROR, True, bad.diagnostic)
    assert not cacheable(failed("crash", "f.c"))
    assert not cache.put("other", failed("crash", "f.c")) and cache.get("other") is None


def test_cache_key_depends_on_text_and_arguments():
    base = cache_key(LINEAR, DEFAULT_COMMAND, ("--timeout", "20"))
    assert base == cache_key(LINEAR, DEFAULT_COMMAND, ("--timeout", "20"))
    assert base != cache_key(LINEAR + " ", DEFAULT_COMMAND, ("--timeout", "20"))
    assert base != cache_key(LINEAR, DEFAULT_COMMAND, ("--timeout", "30"))


def test_unreadable_cache_is_a_miss(tmp_path):
    (tmp_path / "lsp.sqlite").write_text("not a database")
    cache = ResultCache(tmp_path / "lsp.sqlite")
    assert cache.get("k") is None and not cache.put("k", linear_true())


# ----------------------------------------------------------------------------- runner


def test_parse_output_cases():
    good = json.dumps(linear_true().result.to_json()).encode()
    assert parse_output(b"log line\n" + good + b"\n", b"", 0, "x.c", 1.0).result == linear_true().result
    parse_error = Diagnostic("x.c", 1, 2, PARSE_ERROR, "parse error")
    bad = parse_output(json.dumps(parse_error.to_json()).encode(), b"", 2, "x.c", 0)
    assert bad.status == STATUS_ERROR and bad.result.reason == "x.c:1:2: parse error"
    assert bad.diagnostic == bad.cause == parse_error
    crash = parse_output(b"", b"Traceback...\nZeroDivisionError: boom\n", 1, "x.c", 0)
    assert crash.status == STATUS_FAILED and "ZeroDivisionError: boom" in crash.result.reason
    malformed = parse_output(b'{"verdict": "true"}\n', b"", 0, "x.c", 0)
    assert malformed.status == STATUS_FAILED and "malformed" in malformed.result.reason
    assert parse_output(good, b"", 2, "x.c", 0).status == STATUS_ERROR


def _job(text: str, tmp_path: Path, limit: float = 30.0) -> Job:
    return Job(text, tmp_path / "prog.c", FAKE, ("--json",), limit)


def test_runner_uses_the_file_on_disk_when_unchanged_else_a_temporary_copy(tmp_path):
    (tmp_path / "prog.c").write_text(LINEAR)
    on_disk = asyncio.run(Runner().run(_job(LINEAR, tmp_path)))
    assert on_disk.status == STATUS_OK and on_disk.input_path == str(tmp_path / "prog.c")
    assert on_disk.result.invariants[0].line == 9
    edited = asyncio.run(Runner().run(_job("\n" + LINEAR, tmp_path)))
    assert edited.input_path != str(tmp_path / "prog.c") and edited.input_path.endswith("/prog.c")
    assert edited.result.invariants[0].line == 10
    assert not Path(edited.input_path).exists()  # the temporary copy is gone


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _all_gone(pids: list[int], within_s: float = 5.0) -> bool:
    """Every pid dead within `within_s` (SIGKILL is delivered at once, but on a loaded machine
    a killed process can still be running for a moment)."""
    deadline = time.monotonic() + within_s
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_cancelling_a_run_kills_the_verifier_and_its_children(tmp_path, monkeypatch):
    logs = tmp_path / "log"
    logs.mkdir()
    monkeypatch.setenv("FAKE_VERIFY_LOG", str(logs))
    runner = Runner()

    async def scenario() -> None:
        task = asyncio.ensure_future(runner.run(_job("// FAKE sleep=60 child=1\n" + LINEAR, tmp_path)))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if list(logs.glob("*.start")):
                break
        assert runner.live_groups
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    (start,) = logs.glob("*.start")
    pids = [int(start.stem), *json.loads(start.read_text())["children"]]
    assert _all_gone(pids)
    assert not runner.live_groups and not list(logs.glob("*.done"))


def test_runner_wall_limit_and_crashes(tmp_path, monkeypatch):
    logs = tmp_path / "log"
    logs.mkdir()
    monkeypatch.setenv("FAKE_VERIFY_LOG", str(logs))
    slow = asyncio.run(Runner().run(_job("// FAKE sleep=30 child=1\n" + LINEAR, tmp_path, limit=1.5)))
    assert slow.status == STATUS_FAILED and slow.result.reason.startswith("timeout")
    (start,) = logs.glob("*.start")
    pids = [int(start.stem), *json.loads(start.read_text())["children"]]
    assert len(pids) == 2 and _all_gone(pids)
    crash = asyncio.run(Runner().run(_job("// FAKE exit=3\n" + LINEAR, tmp_path)))
    assert crash.status == STATUS_FAILED and "code 3" in crash.result.reason
    missing = asyncio.run(Runner().run(Job(LINEAR, None, ("/nonexistent/quokka",), (), 5)))
    assert missing.status == STATUS_FAILED and "cannot start" in missing.result.reason
    assert slow.verdict is Verdict.UNKNOWN


def test_an_unsupported_feature_is_published_where_the_verifier_found_it(tmp_path):
    text = "int main() {\n  int **p = 0;\n  return p[1];\n}\n"
    outcome = asyncio.run(Runner().run(Job(text, tmp_path / "ptr.c", DEFAULT_COMMAND, ("--json",), 120)))
    assert outcome.status == STATUS_OK and outcome.verdict is Verdict.UNKNOWN
    assert outcome.cause is not None and outcome.cause.kind == UNSUPPORTED_FEATURE
    feature, unknown_main = diagnostics("file:///ptr.c", SourceText(text), outcome)
    assert (feature.code, feature.message) == ("quokka.unsupported",
                                               "unsupported feature: pointer to a pointer (variable p)")
    assert feature.range.start == lsp.Position(2, 9)  # line 3, column 10: `p` in `p[1]`
    assert unknown_main.code == "quokka.unknown"


@pytest.mark.skipif(not BENCH.exists(), reason="needs the shared benchmarks")
def test_data_model_from_the_task_file_beside_the_program():
    assert task_data_model(BENCH / "svcomp-nla-dev" / "divbin.i") == "ILP32"
    assert task_data_model(BENCH / "quokka-dev" / "cohencu_1.c") == "LP64"
    assert task_data_model(Path("/nonexistent/prog.c")) is None


# ----------------------------------------------------------------------------- text


def test_mask_blanks_comments_strings_and_directives_keeping_offsets():
    text = '#include <x.h>\nint a; // while\nchar *s = "for(";\n/* do */ int b;'
    masked = mask(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    assert "while" not in masked and "for" not in masked and "do" not in masked and "include" not in masked
    assert "int b;" in masked


def test_assertion_sites_skip_the_wrappers_and_declarations():
    sites = assertion_sites(SourceText(COHENCU))
    assert len(sites) == 11
    assert all(s.name == "__VERIFIER_assert" for s in sites)
    assert sites[0].text == "__VERIFIER_assert(z == 6 * n + 6)" and sites[0].span.line == 33
    direct = "void reach_error();\nint main() { int x = 1;\n if (x != 1) reach_error();\n assert(x);\n}"
    assert [(s.name, s.span.line) for s in assertion_sites(SourceText(direct))] == [
        ("reach_error", 3), ("assert", 4)]


def test_functions_and_locations():
    assert [f.name for f in functions(SourceText(COHENCU))] == [
        "reach_error", "assume_abort_if_not", "__VERIFIER_assert", "main"]
    assert mentioned_at("/tmp/q/prog.c:3:7: unsupported feature: float", "/other/prog.c") == (3, 7)
    assert mentioned_at("no engine decided (unsupported feature at prog.c:12)", "/x/prog.c") == (12, 0)
    assert mentioned_at("lib.h:4:1: x; then (prog.c:5:2: float f)", "/x/prog.c") == (5, 2)
    assert mentioned_at("timeout after 20 s", "prog.c") is None


def test_quokka_lsp_is_a_subcommand_and_the_worker_entry_runs_quokka_verify():
    import subprocess

    helped = subprocess.run([sys.executable, "-m", "quokka.server", "--help"], capture_output=True, text=True,
                            timeout=60)
    assert helped.returncode == 0 and "--verifier" in helped.stdout and "--no-cache" in helped.stdout
    worker = [sys.executable, "-m", "quokka.server.verify_main"]
    missing = subprocess.run([*worker, "/nonexistent/x.c", "--json"], capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 2 and json.loads(missing.stdout)["status"] == "error"
