"""A run from start to end, for `memeval.api`, the `memeval run` command, the sweep and the
pytest plugin alike: plan it (or reopen it), run it on an executor, fold and close it, write its
reports.

This is core: it never imports the farm. The farm is one executor (`memeval_farm.executor`),
which the top layer (the command line, `memeval.api`, the pytest plugin) picks; `InProcess` is
the other, here (`memeval.evaluation.execution`).
"""
