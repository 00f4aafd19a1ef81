"""The distributed layer: Celery app, tasks, Redis-backed limits and budgets, the embedded farm.

It installs as `memeval_farm`, never as a generic `workers`, so a Celery project's own
`workers` package and memeval can live in one environment. The core (`memeval`) never imports
it; only the shell (CLI, API) reaches for it, and only when a run goes to the farm.
"""
