"""A run from start to end, for `memeval.api` and the `memeval run` command alike: plan it (or
reopen it), run it in this process or on a farm, fold and close it, write its reports.

This is the top layer, beside the command line: it may reach the farm (`workers/`), while the
core below it (suites, engines, runner, scoring, store, report) never does.
"""
