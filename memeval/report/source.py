"""Where a report comes from: a JSON report file, a folder of reports, or a run in the store."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from memeval.errors import UsageError
from memeval.report.stored import fold_run
from memeval.results import RunReport
from memeval.store import open_store


def load_report(ref: str, database_url: str | None = None) -> RunReport:
    """`ref` is a path to report.json, a folder holding one, or a run id in the store."""
    path = Path(ref)
    if path.is_dir():
        path = path / "report.json"
        if not path.is_file():
            raise UsageError(f"no report.json in {ref}", fix="give the run's --out folder")
    if path.is_file():
        try:
            return RunReport.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            raise UsageError(
                f"{path} is not a memeval JSON report: {exc.error_count()} problems, "
                f"first at `{'.'.join(map(str, exc.errors()[0]['loc']))}`",
                fix="give the report.json a run wrote, or a run id",
            ) from exc
    if path.suffix == ".json" or "/" in ref:
        raise UsageError(f"no file {ref}", fix="check the path, or give a run id from the store")
    return report_from_store(ref, database_url)


def report_from_store(run_id: str, database_url: str | None = None) -> RunReport:
    """Rebuilt from the stored case results, so it reflects resumed and late cases too."""
    with open_store(database_url) as store:
        url = store.url
        if url.get_backend_name() == "sqlite" and not Path(url.database or "").exists():
            raise UsageError(
                f"no results store at {url.database}",
                fix="run from the folder you ran memeval in, or set MEMEVAL_DATABASE_URL",
            )
        return fold_run(store, run_id)
