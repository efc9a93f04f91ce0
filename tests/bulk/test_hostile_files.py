"""Issue 19's file classes as a corpus, each file made here: shared-string amplification, a sheet
spanning the whole grid, a zip bomb, ODS repeats, a symlink planted at the results path, a ReDoS
pattern and formula payloads. Each is refused in one line, bounded, or neutralized."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shipsync import patterns
from shipsync.bulk import intake_limits
from shipsync.bulk.reader import read_sheet
from shipsync.bulk.record import write_results_file
from shipsync.bulk.results_cells import MAX_CELL_CHARACTERS, TRIGGERS, safe_cell
from shipsync.bulk.templates import write_template
from shipsync.errors import InputError
from shipsync.safe_files import UnsafePathError, make_folders, open_log, replacing, write_bytes
from shipsync.values import FieldRules, ValueProblem, check_value
from support.hostile_files import FORMULA_PAYLOADS, amplified_xlsx, cornered_xlsx, ods_cell, write_raw_ods, zip_bomb_xlsx
from support.lake import location, write_now
from support.waiting import HANG_S

READ_IN_CHILD = """
import re, sys
from pathlib import Path
from shipsync.bulk.reader import read_sheet
from shipsync.errors import InputError
for name in sys.argv[1:]:
    try:
        read_sheet(Path(name))
        print("read")
    except InputError as exc:
        print("refused:", exc)
# VmHWM, not ru_maxrss: the latter keeps the RSS of the parent that forked this process.
print(int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024)
"""


@pytest.fixture(scope="module")
def read_in_child(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], int]:
    """What reading each hostile file did, and the peak RSS (MB), in a process of their own: a
    regression may abort the process (the reader's allocation failing), and must not take pytest
    with it. One process for all: starting one costs seconds."""
    folder = tmp_path_factory.mktemp("hostile")
    files = {
        "amplified": amplified_xlsx(folder / "amplified.xlsx"),
        "corners": cornered_xlsx(folder / "corners.xlsx"),
        "lying": cornered_xlsx(folder / "lying.xlsx", dimension="A1:B2"),  # the declared size is verified
    }
    assert all(f.stat().st_size < 10_000 for f in files.values())
    done = subprocess.run([sys.executable, "-c", READ_IN_CHILD, *map(str, files.values())], capture_output=True, text=True, timeout=HANG_S)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(lines) == len(files) + 1, f"exit {done.returncode}: {done.stderr[-500:]}"
    return dict(zip(files, lines, strict=False)), int(lines[-1])


def test_shared_string_amplification_is_refused_before_parsing(read_in_child: tuple[dict[str, str], int]) -> None:
    outcomes, peak_mb = read_in_child
    outcome = outcomes["amplified"]
    assert outcome.startswith("refused:") and "its cells expand to 381 MB" in outcome and "(256 MB)" in outcome
    assert peak_mb < 250  # the imports take ~120 MB; unchecked, calamine takes ~880 MB (openpyxl took 2.9 GB)


def test_a_sheet_spanning_the_grid_is_refused_not_a_crash(read_in_child: tuple[dict[str, str], int]) -> None:
    for name in ("corners", "lying"):
        outcome = read_in_child[0][name]
        assert outcome.startswith("refused:") and "a sheet spans 17,179,869,184 cells" in outcome, name


def test_an_overstated_dimension_alone_is_no_reason_to_refuse(tmp_path: Path) -> None:
    from shipsync_bench.xlsx_file import MAIN, write_raw_xlsx

    sheet = f'<worksheet xmlns="{MAIN}"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row>'
    sheet += '<row r="2"><c r="A2" t="s"><v>1</v></c></row></sheetData></worksheet>'
    file = write_raw_xlsx(tmp_path / "overstated.xlsx", sheet, f'<sst xmlns="{MAIN}"><si><t>po_number</t></si><si><t>PO-1</t></si></sst>')
    assert read_sheet(file).rows == [["PO-1"]]


def test_a_csv_of_one_wide_line_is_refused_at_that_line_before_anything_is_built(tmp_path: Path) -> None:
    """Issue 27's file: a first line of commas, then 300 short lines. 20 KB took 45 s and 520 MB,
    100 KB ran past 120 s at 1.3 GB: every row was padded to the widest before any bound."""
    files = []
    for size in (20_000, 100_000):
        file = tmp_path / f"wide-{size}.csv"
        file.write_text("container_number" + "," * size + "\n" + "CSQU3054383,PO-1\n" * 300)
        files.append(str(file))
    done = subprocess.run([sys.executable, "-c", READ_IN_CHILD, *files], capture_output=True, text=True, timeout=HANG_S)
    *outcomes, peak_mb = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(outcomes) == 2, done.stderr[-500:]
    for name, outcome in zip(files, outcomes, strict=True):
        assert outcome == f"refused: {name}: row 1, column 1,025: more columns than shipsync reads (1,024)"
    assert int(peak_mb) < 250  # the imports take ~120 MB


def test_csv_width_and_cells_are_checked_row_by_row(tmp_path: Path) -> None:
    wide_row = tmp_path / "wide-row.csv"  # quoted cells: the row is split, then counted
    wide_row.write_text("a,b\n1,2\n" + ",".join(['"x"'] * 1_025) + "\n3,4\n")
    spanning = tmp_path / "spanning.csv"  # one row over two lines, each under the bound
    spanning.write_text("a,b\n1,2\n" + ",".join(["x"] * 600) + ',"multi\nline",' + ",".join(["y"] * 600) + "\n")
    many = tmp_path / "many.csv"  # 1,024 named columns and short rows: each is padded to the header
    many.write_text(",".join(f"c{n}" for n in range(1_024)) + "\n" + "x\n" * 49_000)
    narrow = tmp_path / "narrow.csv"
    narrow.write_text(",".join(f"c{n}" for n in range(1_024)) + "\n" + "x\n" * 48_000)
    with pytest.raises(InputError, match=r"wide-row\.csv: row 3, column 1,025: more columns than shipsync reads \(1,024\)$"):
        read_sheet(wide_row)
    with pytest.raises(InputError, match=r"spanning\.csv: row 3, column 1,025: more columns"):
        read_sheet(spanning)
    with pytest.raises(InputError, match=r"many\.csv: row 48,829: 48,829 rows of 1,024 columns or more pass the 50,000,000 cells"):
        read_sheet(many)
    assert len(read_sheet(narrow).rows) == 48_000  # 49 million cells: within the bound
    exact = tmp_path / "exact.csv"
    exact.write_text(",".join(f"c{n}" for n in range(1_024)) + "\n" + ",".join(["v"] * 1_024) + "\n")
    assert len(read_sheet(exact).headers) == 1_024


def test_a_workbook_wider_than_the_bound_is_refused_before_parsing(tmp_path: Path) -> None:
    from shipsync_bench.xlsx_file import write_xlsx

    header = [f"c{n}" for n in range(1_100)]
    with pytest.raises(InputError, match=r"wide\.xlsx: a sheet reaches column APH \(1,100\), more columns than shipsync reads \(1,024\)$"):
        read_sheet(write_xlsx(tmp_path / "wide.xlsx", [header, ["x"] * 1_100]))
    repeated = ods_cell("x", ' table:number-columns-repeated="2000"')
    ods = write_raw_ods(tmp_path / "wide.ods", f'<table:table table:name="S"><table:table-row>{repeated}</table:table-row></table:table>')
    with pytest.raises(InputError, match=r"wide\.ods: a sheet reaches column BXX \(2,000\)"):
        read_sheet(ods)
    assert len(read_sheet(write_xlsx(tmp_path / "fits.xlsx", [header[:1_024], ["x"] * 1_024])).headers) == 1_024


def test_a_zip_bomb_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intake_limits, "MAX_UNZIPPED_BYTES", 8 * intake_limits.MiB)  # the same check, a smaller bomb
    file = zip_bomb_xlsx(tmp_path / "bomb.xlsx", 16 * intake_limits.MiB)
    assert file.stat().st_size < 100_000
    with pytest.raises(InputError, match="its zip members inflate to 16 MB, more than shipsync reads at once") as caught:
        read_sheet(file)
    assert "\n" not in str(caught.value)


def test_ods_repeats_are_multiplied_out_before_parsing(tmp_path: Path) -> None:
    repeated = ods_cell("x" * 100, ' table:number-columns-repeated="1000"')
    grid = write_raw_ods(
        tmp_path / "grid.ods",
        f'<table:table table:name="S"><table:table-row table:number-rows-repeated="100000">{repeated}</table:table-row></table:table>',
    )
    with pytest.raises(InputError, match="a sheet spans 100,000,000 cells"):
        read_sheet(grid)
    spaces = '<table:table-cell office:value-type="string"><text:p>a<text:s text:c="300000000"/>b</text:p></table:table-cell>'
    blank = write_raw_ods(tmp_path / "spaces.ods", f'<table:table table:name="S"><table:table-row>{spaces}</table:table-row></table:table>')
    with pytest.raises(InputError, match="its cells expand to 286 MB"):
        read_sheet(blank)
    # LibreOffice pads every sheet with repeated empty rows and cells: those count for nothing.
    padded = f"<table:table-row>{ods_cell('a')}</table:table-row><table:table-row>{ods_cell('1')}</table:table-row>"
    padded += (
        '<table:table-row table:number-rows-repeated="1048574"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
    )
    assert read_sheet(write_raw_ods(tmp_path / "padded.ods", f'<table:table table:name="S">{padded}</table:table>')).rows == [["1"]]


def test_results_file_replaces_a_planted_symlink_and_never_writes_through_it(tmp_path: Path) -> None:
    source = tmp_path / "tags.csv"
    source.write_text("container_number,po_number\nCSQU3054383,PO-1\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "tags.csv.custom-fields.results.csv").symlink_to(victim)
    written = write_results_file(read_sheet(source), [], [], "custom-fields")
    assert victim.read_text() == "precious"
    assert not written.is_symlink() and "status" in written.read_text(encoding="utf-8-sig")
    # No temp file left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tags.csv", "tags.csv.custom-fields.results.csv", "victim.txt"]


def test_a_template_replaces_a_planted_symlink_too(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "custom-fields.csv").symlink_to(victim)
    written = write_template("custom-fields", tmp_path / "custom-fields.csv")
    assert victim.read_text() == "precious" and not written.is_symlink() and "container_number" in written.read_text()


def test_safe_writes_leave_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    target = tmp_path / "store.json"
    write_bytes(target, b"old", mode=0o600)
    assert target.read_bytes() == b"old" and target.stat().st_mode & 0o777 == 0o600
    with pytest.raises(RuntimeError), replacing(target) as out:
        out.write(b"half")
        raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["store.json"]
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(IsADirectoryError):
        write_bytes(tmp_path / "dir.csv", b"x")
    assert sorted(os.listdir(tmp_path)) == ["dir.csv", "store.json"]


def test_no_writer_follows_a_link_planted_at_its_file_or_its_old_temporary_name(tmp_path: Path) -> None:
    """The report (it wrote `.NAME.<pid>.tmp`), the state of `shipsync up` (it wrote `up.tmp`) and
    the logs of its processes: a link planted where each used to write is never written through."""
    from shipsync.orchestration.state import StateDir
    from shipsync.report import build_report

    victim = tmp_path / "authorized_keys"
    victim.write_text("keep-me\n")
    report = tmp_path / "report.html"
    (tmp_path / f".report.html.{os.getpid()}.tmp").symlink_to(victim)
    build_report(location(tmp_path / "none"), report, spool=tmp_path / "spool")
    state = StateDir(tmp_path / "state")
    make_folders(state.root)
    (state.root / "up.tmp").symlink_to(victim)
    state.write({"pid": 1})
    log = tmp_path / "logs" / "server.log"
    make_folders(log.parent)
    log.symlink_to(victim)
    with pytest.raises(UnsafePathError, match=r"server\.log: cannot open this log"):
        open_log(log)
    assert victim.read_text() == "keep-me\n"
    assert report.read_text().startswith("<!DOCTYPE html>") and not report.is_symlink()
    assert state.read() == {"pid": 1} and state.state_file.stat().st_mode & 0o777 == 0o600


def test_folders_shipsync_creates_are_private_their_parents_too(tmp_path: Path) -> None:
    """`mkdir -p` gives the parents it makes the umask's mode: the receiver made the warehouse
    folder 0755 on its way to the spool (it makes the spool only now), the report its output folder."""
    from shipsync.report import build_report
    from shipsync.webhooks.writer import SpoolWriter

    write_now(tmp_path / "warehouse", {"documents": {"id": ["d"]}})  # the first sync makes the lake's folder
    SpoolWriter(tmp_path / "warehouse" / "spool").close()
    build_report(location(tmp_path / "none"), tmp_path / "out" / "monthly" / "report.html", spool=tmp_path / "spool")
    with open_log(tmp_path / "state" / "logs" / "worker.log") as out:
        out.write(b"started\n")
    made = ["warehouse", "warehouse/spool", "out", "out/monthly", "state", "state/logs"]
    assert {name: (tmp_path / name).stat().st_mode & 0o777 for name in made} == dict.fromkeys(made, 0o700)
    assert (tmp_path / "state" / "logs" / "worker.log").stat().st_mode & 0o777 == 0o600
    os.chmod(tmp_path / "out", 0o755)  # a folder that exists is left as it is
    build_report(location(tmp_path / "none"), tmp_path / "out" / "report.html", spool=tmp_path / "spool")
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755


def test_a_redos_pattern_answers_at_once() -> None:
    outcome: list[object] = []
    rules = FieldRules("short_text", pattern="(a+)+$")
    cpu: list[float] = []

    def check() -> None:
        started = time.thread_time()
        outcome.append(_problem_of("a" * 34 + "!", rules))
        cpu.append(time.thread_time() - started)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(timeout=300)  # a hang guard: Python's re takes hours on this cell, the check milliseconds
    assert not worker.is_alive() and "does not match the pattern" in str(outcome[0])
    assert cpu[0] < 10  # CPU seconds of the check's own thread: a busy machine does not add to them
    assert check_value("a" * 34, rules) == "a" * 34


def test_a_pattern_only_backtracking_can_run_gets_a_time_limit_then_is_refused_at_once() -> None:
    rules = FieldRules("short_text", pattern=r"(a|aa)+\1c")  # a back-reference: RE2 cannot, regex must
    started = time.thread_time()  # CPU seconds of this thread: a busy machine does not add to them
    assert "takes too long to check" in _problem_of("a" * 40 + "x", rules)
    assert "takes too long to check" in _problem_of("a" * 41 + "x", rules)
    assert time.thread_time() - started < 5
    lookahead = FieldRules("short_text", pattern=r"(?=.*\d)[A-Z0-9-]+")
    assert check_value("PO-1", lookahead) == "PO-1" and "does not match" in _problem_of("PO-X", lookahead)
    assert patterns.fullmatch(r"^PO-\d+\Z", "PO-12")


def _problem_of(text: str, rules: FieldRules) -> str:
    try:
        check_value(text, rules)
    except ValueProblem as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize("payload", FORMULA_PAYLOADS)
def test_no_formula_survives_in_any_separator_locale(payload: str) -> None:
    neutral = safe_cell(payload)
    for separator in (",", ";", "\t", "\n", "\r"):
        for part in neutral.split(separator):
            assert not part.lstrip(" \u00a0").startswith(tuple(TRIGGERS)) or part.lstrip(" \u00a0")[0] in "\t\r", (separator, neutral)
    assert not neutral.startswith(tuple(TRIGGERS))
    assert neutral.replace("'", "") == payload.replace("'", "")  # only quote marks were added


def test_results_cells_are_neutralized_and_capped(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    rows = [["Container Number", "=Note"], *[["CSQU3054383", p] for p in FORMULA_PAYLOADS], ["CSQU3054383", "y" * 1_000_000]]
    with source.open("w", newline="") as out:
        csv.writer(out).writerows(rows)
    written = write_results_file(read_sheet(source), [], [], "custom-fields")
    assert written.stat().st_size < 100_000  # the 1 MB cell is cut, and says so
    lines = written.read_text(encoding="utf-8-sig")
    for locale_separator in (";", ","):
        cells = [c.strip('" ') for line in lines.splitlines() for c in line.split(locale_separator)]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\uff1d"))]
    read_back = list(csv.reader(written.open(encoding="utf-8-sig", newline="")))
    assert read_back[0][1] == "'=Note" and read_back[-1][1].endswith(
        f"[cut: 1,000,000 characters, the first {MAX_CELL_CHARACTERS - 64:,} shown]"
    )
