"""The results store's keyed tables and its reading of files that `quokka batch` did not write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from quokka.invariants.train.sources import read_results_db
from quokka.verifier.errors import InputError
from quokka.verifier.infra.store import KeyedTable, RunInfo, Store, StoreError, reading


def test_keyed_table_round_trip_and_replace(tmp_path: Path) -> None:
    table = KeyedTable(tmp_path / "sub" / "t.sqlite", "things")
    assert table.get("k") is None
    assert table.put("k", "one") and table.get("k") == "one"
    assert table.put("k", "two") and table.get("k") == "two"
    assert KeyedTable(tmp_path / "sub" / "t.sqlite", "things").get("k") == "two"  # committed


def test_keyed_table_keeps_the_outcome_cache_schema(tmp_path: Path) -> None:
    path = tmp_path / "lsp.sqlite"
    with sqlite3.connect(path) as old:  # a cache file written before the store owned it
        old.execute("CREATE TABLE outcomes (key TEXT PRIMARY KEY, outcome TEXT NOT NULL, stored REAL)")
        old.execute("INSERT INTO outcomes VALUES ('k', 'old', 0)")
    table = KeyedTable(path, "outcomes", value="outcome")
    assert table.get("k") == "old" and table.put("k", "new") and table.get("k") == "new"


def test_keyed_table_failures_are_misses(tmp_path: Path) -> None:
    (tmp_path / "bad.sqlite").write_text("not a database")
    bad = KeyedTable(tmp_path / "bad.sqlite", "t")
    assert bad.get("k") is None and not bad.put("k", "v")
    (tmp_path / "file").write_text("")
    under_a_file = KeyedTable(tmp_path / "file" / "t.sqlite", "t")
    assert under_a_file.get("k") is None and not under_a_file.put("k", "v")


def test_a_foreign_results_table_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE results (id INTEGER, run_id INTEGER, program TEXT, verdict TEXT)")
        con.execute("INSERT INTO results VALUES (1, 1, 'p.c', 'true')")
    with reading(db) as store, pytest.raises(StoreError, match="not a Quokka results database"):
        store.results()
    with pytest.raises(InputError, match="not a results database of `quokka batch`"):
        list(read_results_db(db))


def test_read_results_db_refuses_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    (tmp_path / "r.db").write_text("not a database")
    with pytest.raises(InputError, match=r"r\.db: not a results database of `quokka batch`: "):
        list(read_results_db(tmp_path / "r.db"))


def test_integrity_problems_of_a_sound_store(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with Store.open(db) as store:
        store.start_run(RunInfo(id=0, signature="s", config="c"))
    with reading(db) as store:
        assert store.integrity_problems() == []
