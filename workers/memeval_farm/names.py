"""The names the farm's tasks are registered and sent under: a dispatcher and a worker of one
version agree on them without importing each other's modules."""

RUN_CASE = "memeval.run_case"
FINISH_RUN = "memeval.finish_run"
FINISH_SWEEP = "memeval.finish_sweep"
