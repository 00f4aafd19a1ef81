"""`memeval view`: a local web viewer over the results store, read-only."""
