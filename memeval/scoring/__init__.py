"""Scoring: checks, probe metrics, KPIs and the composite, all pure functions of stored results."""
