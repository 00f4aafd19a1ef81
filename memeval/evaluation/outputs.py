"""Where a finished (or stopped) run's reports go."""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console

from memeval.report import default_out_dir, write_reports
from memeval.results import RunReport


class Outputs(BaseModel):
    """`out_dir` None: `./memeval-runs/<label>/`; `json_path` and `md_path` are extra copies."""

    out_dir: Path | None = None
    json_path: Path | None = None
    md_path: Path | None = None

    def write(self, report: RunReport, label: str, console: Console) -> Path:
        """report.md, report.json and report.html in the run's folder, plus any copies asked
        for; returns the folder."""
        paths = write_reports(report, self.out_dir or default_out_dir(label))
        for copy, source in ((self.json_path, paths["json"]), (self.md_path, paths["md"])):
            if copy is not None:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
        console.print(f"reports: {paths['html'].parent}", highlight=False)
        return paths["html"].parent
