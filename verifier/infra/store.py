"""The one results store: sqlite databases written through sqlite-utils (the only module that
imports sqlite), used by batch runs, the editor cache and model evaluation.

Tables of a batch results database:

* `runs`: one row per batch run (configuration, verify arguments, limits, tool version,
  machine, start and end); a run is found again by its `signature`, which is how re-running the
  same command resumes it.
* `sessions`: one row per invocation that worked on a run (a resumed run has several).
* `results`: one row per finished task of a run (unique per run and task), committed as soon
  as the task finishes, so that killing the writer loses only the tasks in flight.

The database is in WAL mode. There is one writer at a time: `Store.open(..., writer=True)`
takes an exclusive lock on `<db>.lock` (released by the OS even when the writer is killed);
readers (`writer=False`) open the database read-only and never wait for the writer. A writer
checks the file first (`PRAGMA quick_check`): a damaged store, like any sqlite error later, is a
one-line `StoreError`, not a traceback.

`KeyedTable` is a table of texts by key in a file of its own (the language server's outcome cache).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import hashlib
import json
import os
import sqlite3
import time
import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from quokka.verifier.errors import MalformedRecord, QuokkaError, decoded
from sqlite_utils import Database

SCHEMA_VERSION = 1
_JSON_FIELDS = (
    "invariants",
    "counterexample",
    "candidates",
    "proposer_stats",
    "engines",
    "overflow_sites",
    "published",
)
_RUN_JSON_FIELDS = ("verify_args", "verifier", "limits", "sets", "machine", "problems")


class StoreError(QuokkaError):
    """The results store cannot be opened or written."""


def now() -> str:
    """The current time, UTC, ISO 8601 with microseconds (sortable as text)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def content_key(*parts: str | bytes) -> str:
    """A SHA-256 key over `parts` (each length-prefixed, so ("ab", "c") != ("a", "bc"))."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunInfo:
    """One batch run (a row of `runs`)."""

    id: int
    signature: str
    config: str
    verify_args: tuple[str, ...] = ()
    verifier: tuple[str, ...] = ()
    limits: Mapping[str, Any] = field(default_factory=dict)
    sets: tuple[str, ...] = ()
    tool_version: str = ""
    machine: Mapping[str, Any] = field(default_factory=dict)
    started_at: str = ""
    ended_at: str | None = None
    status: str = "running"
    bench: str | None = None
    tasks_total: int = 0
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultRow:
    """One finished task of a run (a row of `results`). JSON fields hold Python values."""

    run_id: int
    task: str
    name: str
    status: str  # "true" | "false" | "unknown" | "timeout" | "out of memory" | "error: ..."
    verdict: str
    category: str
    score: int
    expected: str = ""  # "true" | "false" | "" (not stated)
    set_name: str = ""
    family: str = ""
    program: str = ""
    cpu_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0
    verify_time_s: float | None = None
    reason: str = ""
    decided_by: str = ""
    invariants: Any = None
    counterexample: Any = None
    candidates: Any = None
    proposer_stats: Any = None
    engines: Any = None
    overflow_sites: Any = None
    published: Any = None
    exit_code: int | None = None
    stderr_tail: str = ""
    witness: str = ""
    session_id: int | None = None
    started_at: str = ""
    finished_at: str = ""
    host: str = ""
    id: int | None = None

    @property
    def expected_bool(self) -> bool | None:
        return None if not self.expected else self.expected == "true"


def _run_columns() -> dict[str, type]:
    return {
        "id": int,
        "signature": str,
        "config": str,
        "verify_args": str,
        "verifier": str,
        "limits": str,
        "sets": str,
        "tool_version": str,
        "machine": str,
        "started_at": str,
        "ended_at": str,
        "status": str,
        "bench": str,
        "tasks_total": int,
        "problems": str,
    }


def _result_columns() -> dict[str, type]:
    """Column types from the annotations of `ResultRow` (JSON fields are text)."""
    hints = typing.get_type_hints(ResultRow)
    columns: dict[str, type] = {}
    for f in dataclasses.fields(ResultRow):
        options = [t for t in typing.get_args(hints[f.name]) or (hints[f.name],) if t is not type(None)]
        kind = options[0] if options and options[0] in (int, float) else str
        columns[f.name] = str if f.name in _JSON_FIELDS else kind
    return columns


class Store:
    """The results database. Open it with `Store.open`; use it as a context manager."""

    def __init__(self, db: Database, path: Path, lock: IO[str] | None) -> None:
        self.db = db
        self.path = path
        self._lock = lock

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: Path, *, writer: bool = True) -> Store:
        """Open (writer: create) the store at `path`; a writer holds the write lock."""
        path = Path(path)
        if not writer:
            return cls(_open_read_only(path), path, None)
        lock = _take_lock(path)
        try:
            db = Database(_connect(path))
            _check_integrity(db)
            db.enable_wal()
            _create_schema(db)
        except (sqlite3.Error, OSError, StoreError) as exc:
            lock.close()
            raise StoreError(f"{path}: cannot open the results database: {exc}") from exc
        return cls(db, path, lock)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A transaction; an sqlite error (other than a constraint) becomes a `StoreError`."""
        with self._reading("write"), self.db.conn:
            yield

    @contextlib.contextmanager
    def _reading(self, doing: str = "read") -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:  # a damaged file, a full disk, ...
            raise StoreError(f"{self.path}: cannot {doing} the results database: {exc}") from exc

    def close(self) -> None:
        self.db.conn.close()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs

    def find_run(self, signature: str) -> RunInfo | None:
        """The latest run with this signature (the run that re-running a command resumes)."""
        with self._reading():
            rows = list(
                self.db.table("runs").rows_where("signature = ?", [signature], order_by="id desc", limit=1)
            )
        return _run_from_row(rows[0]) if rows else None

    def start_run(self, run: RunInfo) -> RunInfo:
        """Insert `run` (its `id` is ignored) and return it with its new id."""
        row = _run_to_row(run)
        row.pop("id")
        with self._writing():
            run_id = self.db.table("runs").insert(row).last_pk or 0
        return dataclasses.replace(run, id=int(run_id))

    def update_run(self, run_id: int, **changes: Any) -> None:
        row = {k: _dump(v) if k in _RUN_JSON_FIELDS else v for k, v in changes.items()}
        with self._writing():
            self.db.table("runs").update(run_id, row)

    def runs(self, ids: Iterable[int] | None = None) -> list[RunInfo]:
        wanted = None if ids is None else set(ids)
        with self._reading():
            runs = [_run_from_row(r) for r in self.db.table("runs").rows_where(order_by="id")]
        return [r for r in runs if wanted is None or r.id in wanted]

    def start_session(self, run_id: int) -> int:
        """A new session of `run_id`; earlier ones that never ended are marked `killed` (this
        writer holds the lock, so no other process is still working on them)."""
        row = {"run_id": run_id, "pid": os.getpid(), "host": os.uname().nodename, "started_at": now()}
        with self._writing():
            self.db.execute(
                "update sessions set status = 'killed' where run_id = ? and ended_at is null", [run_id]
            )
            return int(self.db.table("sessions").insert(row).last_pk or 0)

    def end_session(self, session_id: int, status: str) -> None:
        with self._writing():
            self.db.table("sessions").update(session_id, {"ended_at": now(), "status": status})

    # ------------------------------------------------------------------ results

    def add_result(self, row: ResultRow) -> int:
        """Insert and commit one result; a second result for the same run and task is an error."""
        data = _result_to_row(row)
        data.pop("id")
        try:
            with self._writing():
                return int(self.db.table("results").insert(data).last_pk or 0)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"run {row.run_id} already has a result for {row.task}") from exc

    def done_tasks(self, run_id: int) -> set[str]:
        sql = "select task from results where run_id = ?"
        with self._reading():
            return {r[0] for r in self.db.execute(sql, [run_id]).fetchall()}

    def results(self, run_ids: Iterable[int] | None = None) -> list[ResultRow]:
        with self._reading():
            if run_ids is None:
                rows = self.db.table("results").rows_where(order_by="run_id, id")
            else:
                ids = sorted(set(run_ids))
                marks = ", ".join("?" for _ in ids)
                rows = self.db.table("results").rows_where(f"run_id in ({marks})", ids, order_by="run_id, id")
            try:  # a `results` table that `quokka batch` did not write is malformed
                return decoded(lambda: [_result_from_row(r) for r in rows], "a results row")
            except MalformedRecord as exc:
                raise StoreError(f"{self.path}: not a Quokka results database ({exc})") from exc

    def integrity_problems(self) -> list[str]:
        """What `PRAGMA integrity_check` finds wrong with the file (none: an empty list)."""
        with self._reading("check"):
            found = [str(row[0]) for row in self.db.execute("pragma integrity_check").fetchall()]
        return [] if found == ["ok"] else found


# ----------------------------------------------------------------------------- helpers


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
    conn.execute("pragma busy_timeout = 30000")
    return conn


def _check_integrity(db: Database) -> None:
    """Raise `StoreError` when sqlite finds the file damaged (a torn or overwritten page)."""
    problems = [row[0] for row in db.execute("pragma quick_check").fetchall()]
    if problems != ["ok"]:
        first = " ".join(str(problems[0]).split())  # sqlite's message spans lines
        raise StoreError(f"damaged ({first}); restore it or use a new database")


def _open_read_only(path: Path) -> Database:
    if not path.is_file():
        raise StoreError(f"{path}: no such results database")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=30.0)
        db = Database(conn)
        if "results" not in db.table_names():
            raise StoreError(f"{path}: not a Quokka results database (no results table)")
        return db
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the results database: {exc}") from exc


def _take_lock(path: Path) -> IO[str]:
    lock_path = path.with_name(path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = lock_path.open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StoreError(f"{path}: another writer ({holder}) has the database open") from exc
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}")
    handle.flush()
    return handle


def _create_schema(db: Database) -> None:
    with db.conn:
        db.table("runs").create(_run_columns(), pk="id", if_not_exists=True)
        db.table("sessions").create(
            {
                "id": int,
                "run_id": int,
                "pid": int,
                "host": str,
                "started_at": str,
                "ended_at": str,
                "status": str,
            },
            pk="id",
            if_not_exists=True,
        )
        db.table("results").create(_result_columns(), pk="id", if_not_exists=True)
        db.table("results").create_index(["run_id", "task"], unique=True, if_not_exists=True)
        db.table("meta").create({"name": str, "value": str}, pk="name", if_not_exists=True)
        db.table("meta").upsert({"name": "schema_version", "value": str(SCHEMA_VERSION)}, pk="name")


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def _load(text: Any) -> Any:
    return None if text is None or text == "" else json.loads(text)


def _run_to_row(run: RunInfo) -> dict[str, Any]:
    row = dataclasses.asdict(run)
    for name in _RUN_JSON_FIELDS:
        row[name] = _dump(_plain(row[name]))
    return row


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, Mapping) else value


def _run_from_row(row: Mapping[str, Any]) -> RunInfo:
    data: dict[str, Any] = {k: row.get(k) for k in _run_columns()}
    for name in _RUN_JSON_FIELDS:
        loaded = _load(data[name])
        data[name] = tuple(loaded) if isinstance(loaded, list) else (loaded or {})
    data["tasks_total"] = data["tasks_total"] or 0
    for name in ("config", "signature", "tool_version", "started_at", "status"):
        data[name] = data[name] or ""
    return RunInfo(**data)


def _result_to_row(result: ResultRow) -> dict[str, Any]:
    row = dataclasses.asdict(result)
    for name in _JSON_FIELDS:
        row[name] = _dump(row[name])
    return row


def _result_from_row(row: Mapping[str, Any]) -> ResultRow:
    names = {f.name for f in dataclasses.fields(ResultRow)}
    data = {k: v for k, v in row.items() if k in names}
    for name in _JSON_FIELDS:
        data[name] = _load(data.get(name))
    for f in dataclasses.fields(ResultRow):
        if data.get(f.name) is None and f.default == "":
            data[f.name] = ""
    return ResultRow(**data)


@contextlib.contextmanager
def reading(path: Path) -> Iterator[Store]:
    """A read-only store for the `with` block."""
    store = Store.open(path, writer=False)
    try:
        yield store
    finally:
        store.close()


class KeyedTable:
    """A table of texts by key (columns `key`, the text column named by `value`, `stored`: when) in a
    small sqlite file of its own, opened afresh for each call; every failure to read or write is a
    miss, never an error."""

    def __init__(self, path: Path, table: str, *, value: str = "text", timeout_s: float = 2.0) -> None:
        self.path = Path(path)
        self.table = table
        self.value = value
        self.timeout_s = timeout_s

    @contextlib.contextmanager
    def _open(self) -> Iterator[Database]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.timeout_s)
        try:
            db = Database(conn)
            columns = {"key": str, self.value: str, "stored": float}
            db.table(self.table).create(columns, pk="key", not_null={self.value}, if_not_exists=True)
            yield db
        finally:
            conn.close()

    def get(self, key: str) -> str | None:
        """The text stored under `key`; None when there is none or the file cannot be read."""
        try:
            with self._open() as db:
                rows = list(db.table(self.table).rows_where("key = ?", [key], select=f"[{self.value}]"))
        except (sqlite3.Error, OSError):
            return None
        return str(rows[0][self.value]) if rows else None

    def put(self, key: str, text: str) -> bool:
        """Store `text` under `key` (replacing what was there); False when the file cannot be written."""
        row = {"key": key, self.value: text, "stored": time.time()}
        try:
            with self._open() as db, db.conn:
                db.table(self.table).insert(row, pk="key", replace=True)
        except (sqlite3.Error, OSError):
            return False
        return True
