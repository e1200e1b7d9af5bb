"""SV-COMP around the verifier: tasks and sets, batch runs (local or Ray) and their batch schema,
scores, reports and plots, BenchExec's tool-info module, model evaluation; `qa/` holds the tools that
test Quokka itself (torture, faults, acceptance).

The results store and witnesses are the verifier's (`quokka.verifier.infra.store`,
`quokka.verifier.verdict.witnesses`). May import the verifier and the proposers.
"""
