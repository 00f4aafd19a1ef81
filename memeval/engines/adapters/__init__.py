"""Engines reached over HTTP: memeval's own protocol (`http`), CortexDB (`cortex`), hosted
CortexDB (`tinyhumans`), `verifiedstate` and `mem0`.

Each adapter is one small module over the same `transport` (timeouts, retries, clear auth
errors, hidden keys) and `remote` base (settings from the worker's environment, connect on
first use). Where a service publishes no wire format, the adapter's module docstring says what
memeval assumes, so a correction touches that module alone.
"""
