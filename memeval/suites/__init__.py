"""Suites as data: the lifecycle scenarios and the dimension fixtures."""
