"""`shipsync report`: one self-contained HTML page of charts over the warehouse, for people who
would rather look than query. Queries in `queries`, charts in `charts`, the page in `page`."""

from shipsync.report.build import build_report
from shipsync.report.model import ReportResult

__all__ = ["ReportResult", "build_report"]
