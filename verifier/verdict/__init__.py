"""From strategies to a verdict: the portfolio, the gates every verdict passes, results and their forms.

Owns: `portfolio` (strategies under one budget), `checks` (certificates re-checked, counterexamples
replayed), `doublecheck`, `minimize`, `overflow`, `claims`, `results` (the one wire format) and
`witnesses`. May import every other package of the verifier; nothing below imports it, except that
`results` is read by `infra.store` and the command line.
"""
