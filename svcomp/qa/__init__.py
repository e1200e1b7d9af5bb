"""Quality assurance of Quokka itself, not part of a verification run: the torture campaign that
tries to make it answer wrongly, crash or hang; batch fault injection; the kill-and-resume check.

May import everything in `svcomp`, the verifier and the proposers; nothing in the product imports it
except the command registrations in `svcomp.cli`.
"""
