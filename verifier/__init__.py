"""Quokka's verifier: C frontend, IR, interpreter, Z3 encodings, engines and verdicts."""
