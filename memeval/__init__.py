"""memeval: measure how AI-agent memory systems fail, in parallel, against real engines."""

__version__ = "0.1.0"
