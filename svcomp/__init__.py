"""SV-COMP tasks, batch runs, results store, scores, witnesses and reports."""
