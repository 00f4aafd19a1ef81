"""Reports on runs and comparisons between them: markdown, JSON and one self-contained HTML."""

from memeval.report.write import Format, default_out_dir, render_as, write_reports

__all__ = ["Format", "default_out_dir", "render_as", "write_reports"]
