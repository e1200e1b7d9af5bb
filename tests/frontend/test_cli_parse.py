"""`quokka parse` (verifier.cli_parse) and task files (verifier.task)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from quokka.verifier.cli_parse import register
from quokka.verifier.errors import InputError
from quokka.verifier.task import read_task

PROGRAM = "int main() {\n  int x = 0;\n  while (x < 3) {\n    x++;\n  }\n  return 0;\n}\n"


def quokka(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quokka")
    register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    code: int = args.func(args)
    return code


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_ok_json_lists_loops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ok.c", PROGRAM)
    assert quokka("parse", str(path), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "ok" and report["message"] == "" and report["data_model"] == "LP64"
    assert report["file"] == str(path)
    (loop,) = report["loops"]
    assert loop == {
        "id": "L3",
        "line": 3,
        "column": 3,
        "insert_after_line": 3,
        "variables": ["x"],
        "function": "main",
        "parent": None,
    }


def test_text_output_and_dump_ir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ok.c", PROGRAM)
    assert quokka("parse", str(path), "--dump-ir", "--data-model", "ILP32") == 0
    out = capsys.readouterr().out
    assert "ok (ILP32), 1 loop" in out and "L3: line 3:3, insert after line 3" in out
    assert "x = x + 1" in out  # the IR


def test_unsupported_exits_3_with_located_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ptr.c", "int main() {\n  int **p = 0;\n  return p[1];\n}\n")
    assert quokka("parse", str(path), "--json") == 3
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["status"] == "unsupported" and report["loops"] == []
    message = f"{path}:3:10: unsupported feature: pointer to a pointer (variable p)"
    assert captured.err.strip() == message == report["message"]


def test_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.c", "int main( {\n")
    assert quokka("parse", str(bad)) == 2
    assert capsys.readouterr().err.startswith(f"{bad}:1:")
    assert quokka("parse", str(tmp_path / "missing.c"), "--json") == 2
    assert json.loads(capsys.readouterr().out)["status"] == "error"


def test_task_yml_gives_file_and_data_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "prog.c", PROGRAM)
    yml = write(
        tmp_path,
        "prog.yml",
        "format_version: '2.0'\ninput_files: 'prog.c'\nproperties:\n"
        "  - property_file: ../properties/unreach-call.prp\n    expected_verdict: false\n"
        "options:\n  language: C\n  data_model: ILP32\n",
    )
    assert quokka("parse", str(yml), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["data_model"] == "ILP32" and report["file"] == str(tmp_path / "prog.c")
    assert quokka("parse", str(yml), "--json", "--data-model", "LP64") == 0
    assert json.loads(capsys.readouterr().out)["data_model"] == "LP64"
    task = read_task(yml)
    assert (task.file, task.data_model, task.expected, task.property) == (
        tmp_path / "prog.c",
        "ILP32",
        "false",
        "unreach-call",
    )


def test_read_task_rejects_malformed_files(tmp_path: Path) -> None:
    for text in (
        "[1, 2]",
        "format_version: '2.0'\n",
        "input_files: [a.c, b.c]\n",
        "options: {data_model: LP32}\ninput_files: a.c\n",
        ":\n  - [",
    ):
        with pytest.raises(InputError):
            read_task(write(tmp_path, "t.yml", text))
    with pytest.raises(InputError):
        read_task(tmp_path / "none.yml")


def test_bytes_that_are_not_utf8_in_cpps_message_are_a_located_error(tmp_path: Path) -> None:
    """Found by `quokka torture` (a fuzzed file): cpp quotes the line of its warning and cuts a
    character, and reading its output as UTF-8 ended in a traceback instead of the parse error."""
    from quokka.verifier.frontend.lower import lower

    source = tmp_path / "bad.c"
    source.write_bytes(b'int main(void) {\n  int x = 0;\n  G\x11\x01\x95!"\x04Q}\n  return x;\n}\n')
    with pytest.raises(InputError, match=r"bad\.c:3:4: parse error"):
        lower(source)
