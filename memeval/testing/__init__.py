"""Tools for testing memeval and the engines it evaluates: the fault-injecting proxy."""
