"""Invariant proposers: language models, execution traces, annotations."""
