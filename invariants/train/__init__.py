"""Training data from proofs and fine-tuning of the invariant model (`quokka dataset`, `quokka finetune`).

Only `finetune` imports torch/transformers, lazily (inside functions).
"""
