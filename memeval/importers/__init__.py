"""Public benchmarks read from the user's own copy at run time and turned into memeval cases.

The data is not ours to ship (LoCoMo is CC BY-NC 4.0), so nothing of it lives in the package:
an importer reads a local file, checks it against a pinned hash, and builds cases in memory.
"""
