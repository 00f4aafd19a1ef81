"""Engines: the contract every memory system is measured through, and the ones memeval ships."""
