"""Reading spreadsheets: encodings, delimiters, XLSX, bad shapes; converting cells to typed values."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest
from openpyxl import Workbook

from shipsync.bulk.cells import Cell, cell_text, cell_value, parse_number, split_list
from shipsync.bulk.definitions import DefinitionEdits
from shipsync.bulk.kind import unresolved_numbers
from shipsync.bulk.lookup import Knowledge
from shipsync.bulk.model import Problem
from shipsync.bulk.progress import reporting_rows
from shipsync.bulk.reader import read_sheet
from shipsync.bulk.results_cells import safe_cell
from shipsync.bulk.tracking_edits import TrackingRequestEdits
from shipsync.errors import InputError
from shipsync.values import FieldRules, ValueProblem
from shipsync_bench.xlsx_file import write_xlsx
from support.hostile_files import write_ods

ROWS = "Container Number;PO Number\nCSQU3054383;Über-1\n"


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("utf-16", b""), ("cp1252", b"")],
)
def test_csv_encodings_and_sniffed_delimiter(tmp_path: Path, encoding: str, bom: bytes) -> None:
    file = tmp_path / "in.csv"
    file.write_bytes(bom + ROWS.encode(encoding))
    sheet = read_sheet(file)
    assert sheet.headers == ["container_number", "po_number"]
    assert sheet.rows == [["CSQU3054383", "Über-1"]] and sheet.row_numbers == [2]


def test_tab_delimiter_and_forced_options(tmp_path: Path) -> None:
    file = tmp_path / "in.tsv"
    file.write_text("container_number\tpo_number\nCSQU3054383\tA,B\n")
    assert read_sheet(file).rows == [["CSQU3054383", "A,B"]]
    forced = tmp_path / "forced.csv"
    forced.write_bytes("a|b\n1|2\n".encode("latin-1"))
    assert read_sheet(forced, delimiter="|", encoding="latin-1").headers == ["a", "b"]


def test_xlsx_first_or_named_sheet(tmp_path: Path) -> None:
    book = Workbook()
    first = book.active
    assert first is not None
    first.title = "Tags"
    first.append(["Container Number", "Hazardous", "Declared Value"])
    first.append(["CSQU3054383", True, 1234.0])
    other = book.create_sheet("Other")
    other.append(["request_number", "tags"])
    file = tmp_path / "book.xlsx"
    book.save(file)
    sheet = read_sheet(file)
    assert (sheet.sheet, sheet.headers, sheet.rows) == (
        "Tags",
        ["container_number", "hazardous", "declared_value"],
        [["CSQU3054383", True, 1234]],
    )
    assert [type(c) for c in sheet.rows[0]] == [str, bool, int]  # typed, and a whole number is an int
    assert read_sheet(file, sheet="Other").headers == ["request_number", "tags"]
    with pytest.raises(InputError, match="no sheet named 'Missing'"):
        read_sheet(file, sheet="Missing")


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty"), (b"a,A\n1,2\n", "duplicate column"), (b",,\n1,2\n", "headers"), (b"a,,b\n1,2,3\n", "column 2 has no header")],
)
def test_bad_files_name_the_file(tmp_path: Path, content: bytes, message: str) -> None:
    file = tmp_path / "bad.csv"
    file.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_sheet(file)
    assert message in str(caught.value) and "bad.csv" in str(caught.value) and "\n" not in str(caught.value)


def test_ragged_rows_are_reported_not_dropped(tmp_path: Path) -> None:
    file = tmp_path / "ragged.csv"
    file.write_text("a,b\n1\n1,2,3\n\n4,5\n")
    sheet = read_sheet(file)
    assert sheet.rows == [["1", ""], ["1", "2"], ["4", "5"]] and sheet.row_numbers == [2, 3, 5]
    assert sheet.ragged == {3: "3 cells but 2 columns"}


def test_missing_file() -> None:
    with pytest.raises(InputError, match="no such file"):
        read_sheet(Path("/nonexistent/file.csv"))


@pytest.mark.parametrize(
    ("text", "rules", "expected"),
    [
        ("TRUE", FieldRules("boolean"), True),
        ("no", FieldRules("boolean"), False),
        ("1", FieldRules("boolean"), True),
        ("1,234.50", FieldRules("number"), 1234.5),
        ("1.234,50", FieldRules("number"), 1234.5),
        ("42", FieldRules("number"), 42),
        ("03/15/2026", FieldRules("date", default_format="MM/DD/YYYY"), "2026-03-15"),
        ("2026-03-15", FieldRules("date", default_format="MM/DD/YYYY"), "2026-03-15"),
        ("2026-05-11T18:30:00Z", FieldRules("datetime"), "2026-05-11T18:30:00Z"),
        ("HIGH", FieldRules("enum", options=("low", "high")), "high"),
        ("fragile; Oversized", FieldRules("enum_multi", options=("fragile", "oversized")), ["fragile", "oversized"]),
        ("PO-1", FieldRules("short_text", pattern="^[A-Z0-9-]+$", max_length=5), "PO-1"),
    ],
)
def test_cells_become_typed_values(text: str, rules: FieldRules, expected: object) -> None:
    assert cell_value(text, rules) == expected


@pytest.mark.parametrize(
    ("text", "rules", "reason"),
    [
        ("maybe", FieldRules("boolean"), "yes/no"),
        ("lots", FieldRules("number"), "not a number"),
        ("31/31/2026", FieldRules("date", default_format="MM/DD/YYYY"), "not a date"),
        ("rush", FieldRules("enum", options=("low",)), "not an option"),
        ("PO-123456", FieldRules("short_text", max_length=5), "too long"),
        ("po 1", FieldRules("short_text", pattern="^[A-Z0-9-]+$"), "pattern"),
    ],
)
def test_bad_cells_say_why(text: str, rules: FieldRules, reason: str) -> None:
    with pytest.raises(ValueProblem, match=reason):
        cell_value(text, rules)


def test_helpers() -> None:
    assert split_list(" a ; b|c ;") == ["a", "b", "c"]
    assert parse_number("$ 1,000") == 1000
    assert [safe_cell(v) for v in ("=HYPERLINK(1)", "+1", "-2", "@x", "ok")] == ["'=HYPERLINK(1)", "'+1", "'-2", "'@x", "ok"]


def test_csv_cells_stay_as_typed(tmp_path: Path) -> None:
    file = tmp_path / "text.csv"
    file.write_text("request_number,tags,note\n0012,NA,null\n1e5,N/A,\n")
    sheet = read_sheet(file)
    assert sheet.rows == [["0012", "NA", "null"], ["1e5", "N/A", ""]]


def test_csv_quoted_cells_spanning_lines_and_a_ragged_row_after_them(tmp_path: Path) -> None:
    file = tmp_path / "multi.csv"
    file.write_text('a,b\n"x\ny,z,w",2\n1,2,3,4,5\n')
    sheet = read_sheet(file)
    assert sheet.rows == [["x\ny,z,w", "2"], ["1", "2"]] and sheet.row_numbers == [2, 3]
    assert sheet.ragged == {3: "5 cells but 2 columns"}
    wide = tmp_path / "wide.csv"  # the widest row is one whose quoted cell spans lines
    wide.write_text('a\n"1\n2",3,4,5,6\n')
    assert read_sheet(wide).ragged == {2: "5 cells but 1 columns"}


@pytest.mark.parametrize(("delimiter", "message"), [("||", "one character"), ('"', "one character")])
def test_a_bad_forced_delimiter_is_one_line(tmp_path: Path, delimiter: str, message: str) -> None:
    file = tmp_path / "in.csv"
    file.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=message):
        read_sheet(file, delimiter=delimiter)


def test_xlsx_cells_stay_typed_and_keys_typed_as_numbers_still_match(tmp_path: Path) -> None:
    file = write_xlsx(
        tmp_path / "typed.xlsx",
        [
            ["request_number", "Cleared On", "Appointment", "Value", "Hazardous", "Note"],
            [123456, date(2026, 5, 1), datetime(2026, 5, 11, 18, 30), 1234.5, False, "  padded  "],
            [None, None, None, None, None, None],
            [0, date(2026, 5, 2), datetime(2026, 5, 12, 0, 0), 7, True, "=1+1"],
        ],
    )
    sheet = read_sheet(file)
    assert sheet.rows == [
        [123456, date(2026, 5, 1), datetime(2026, 5, 11, 18, 30), 1234.5, False, "padded"],
        [0, date(2026, 5, 2), date(2026, 5, 12), 7, True, "=1+1"],  # midnight reads as a date
    ]
    assert sheet.row_numbers == [2, 4]  # the blank row is skipped; a row of 0 and FALSE is not blank
    assert [cell_text(c) for c in sheet.rows[0]] == ["123456", "2026-05-01", "2026-05-11T18:30:00", "1234.5", "FALSE", "padded"]
    assert "00:00:00" not in "".join(cell_text(c) for c in sheet.rows[1])


def test_ods_first_or_named_sheet(tmp_path: Path) -> None:
    file = write_ods(
        tmp_path / "book.ods",
        {"Tags": [["Container Number", "Hazardous"], ["CSQU3054383", 42]], "Other": [["a"], ["x"]]},
    )
    sheet = read_sheet(file)
    assert (sheet.sheet, sheet.headers, sheet.rows) == ("Tags", ["container_number", "hazardous"], [["CSQU3054383", 42]])
    assert read_sheet(file, sheet="Other").rows == [["x"]]
    with pytest.raises(InputError, match="no sheet named 'Nope'"):
        read_sheet(file, sheet="Nope")


def test_a_broken_workbook_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "broken.xlsx"
    file.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match="not a readable") as caught:
        read_sheet(file)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("cell", "rules", "expected"),
    [
        (date(2026, 5, 1), FieldRules("date", default_format="MM/DD/YYYY"), "2026-05-01"),
        (datetime(2026, 5, 11, 18, 30), FieldRules("datetime"), "2026-05-11T18:30:00Z"),  # no zone in the file: UTC
        (date(2026, 5, 11), FieldRules("datetime"), "2026-05-11T00:00:00Z"),
        (1234.5, FieldRules("number"), 1234.5),
        (7, FieldRules("number"), 7),
        (True, FieldRules("boolean"), True),
        (0, FieldRules("boolean"), False),
        (123456, FieldRules("short_text"), "123456"),
        (date(2026, 5, 1), FieldRules("short_text"), "2026-05-01"),
        (2, FieldRules("enum", options=("1", "2")), "2"),
        (False, FieldRules("short_text"), "FALSE"),
    ],
)
def test_typed_cells_become_values_without_guessing(cell: Cell, rules: FieldRules, expected: object) -> None:
    assert cell_value(cell, rules) == expected


@pytest.mark.parametrize(
    ("cell", "rules", "reason"),
    [
        (date(2026, 5, 1), FieldRules("number"), "expected a number, got a date cell (2026-05-01)"),
        (True, FieldRules("number"), "expected a number, got a yes/no cell (TRUE)"),
        (42, FieldRules("date"), "expected a date, got a number cell (42)"),
        (datetime(2026, 5, 1, 9, 15), FieldRules("date"), "expected a date, got a date-time cell (2026-05-01T09:15:00)"),
        (2, FieldRules("boolean"), "expected yes/no, got a number cell (2)"),
        (1.5, FieldRules("datetime"), "expected a date-time, got a number cell (1.5)"),
        (float("inf"), FieldRules("number"), "not a finite number"),
    ],
)
def test_typed_cells_of_the_wrong_kind_say_what_they_are(cell: Cell, rules: FieldRules, reason: str) -> None:
    with pytest.raises(ValueProblem) as caught:
        cell_value(cell, rules)
    assert reason in str(caught.value)


def test_a_problem_quotes_a_long_cell_shortened() -> None:
    shown = Problem(7, "note", "x" * 1_000_000, "too long").describe()
    assert len(shown) < 300 and "1,000,000 characters" in shown and shown.startswith("row 7, column note:")


def test_reading_and_planning_report_progress_in_chunks(tmp_path: Path) -> None:
    file = tmp_path / "big.csv"
    file.write_text("a,b\n" + "".join(f"{n},x\n" for n in range(25_000)))
    reported: list[int] = []
    sheet = read_sheet(file, on_rows=reported.append)
    assert reported == [10_000, 10_000, 5_000] and len(sheet.rows) == 25_000
    walked: list[int] = []
    counted = reporting_rows(sheet, walked.append)
    assert sum(1 for _ in zip(counted.rows, counted.row_numbers, strict=True)) == 25_000
    assert walked == [10_000, 10_000, 5_000] and counted.rows == sheet.rows and counted.headers == sheet.headers


def test_an_unclosed_quote_names_the_row_people_count(tmp_path: Path) -> None:
    file = tmp_path / "open.csv"
    file.write_text('a,b\n1,2\n"3,4\n')
    with pytest.raises(InputError, match=r"open\.csv: not readable as CSV: .*starting at row 3$"):
        read_sheet(file)


def test_typed_workbook_cells_reach_the_text_kinds_as_people_see_them(tmp_path: Path) -> None:
    """Definitions and tracking requests take every cell as text: a number cell 40 is `40`, TRUE is
    true, a number typed as a request number still finds its tracking request."""
    definitions = read_sheet(
        write_xlsx(
            tmp_path / "definitions.xlsx",
            [
                ["entity_type", "api_slug", "display_name", "data_type", "required", "max_length"],
                ["Container", "po_number", "PO number", "short_text", True, 40],
            ],
        )
    )
    changes, problems = DefinitionEdits().plan(definitions, Knowledge())
    assert not problems and changes[0].after["validation"] == {"required": True, "max_length": 40}
    known = Knowledge(
        tracking_requests={"tr1": {"id": "tr1", "request_number": "123456", "ref_number": None, "tracked_object_id": None}},
        tracking_by_number={"123456": ["tr1"]},
    )
    tracking = read_sheet(write_xlsx(tmp_path / "tracking.xlsx", [["request_number", "ref_number"], [123456, 98765]]))
    assert unresolved_numbers(tracking, "request_number", known) == []
    changes, problems = TrackingRequestEdits().plan(tracking, known)
    assert not problems and [(c.entity_id, c.field, c.after) for c in changes] == [("tr1", "ref_number", "98765")]
