"""The HTML report, read as text: escaping of untrusted text, the content security policy, the figures,
the numbers (score.summary's own), the per-verdict table and details, and the command's exit codes."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from kerneljudge.results import score
from kerneljudge.core.extras import MissingExtra, require
from kerneljudge.results.report.html import esc, json_for_script, tag

from .verdict_logs import (HOSTILE_EXCERPT, HOSTILE_PROBLEM, HOSTILE_REASON, HOSTILE_SOLUTION, cli, unjudgeable,
                           verdict, write_bench_run, write_run_log)

pytest.importorskip("matplotlib", reason="the report needs the 'report' extra (matplotlib)")

from kerneljudge.results.report.build import ReportSettings, write_report  # noqa: E402
from kerneljudge.results.runs import load_runs  # noqa: E402

FAST = ReportSettings(n_boot=100, band_boot=20)


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    write_bench_run(root / "bench")
    write_run_log(root / "log" / "run.jsonl")
    return root


@pytest.fixture(scope="module")
def page(runs_dir) -> str:
    runs = load_runs([runs_dir / "bench", runs_dir / "log" / "run.jsonl"], ["bench <b>run</b>", "log"])
    out = runs_dir / "report.html"
    write_report(runs, out, settings=FAST)
    return out.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------- escaping, policy


def test_hostile_text_never_becomes_markup(page):
    for raw in ("<script>window.__pwned", "<img src=x", "<svg onload", "<b onmouseover", "<i>italic</i>",
                "<b>run</b>", "</pre><script>"):
        assert raw not in page
    # ... and is on the page, escaped, exactly once per place it belongs
    assert esc(HOSTILE_SOLUTION) in page
    assert esc(HOSTILE_EXCERPT) in page
    assert esc(HOSTILE_REASON) in page
    assert esc(HOSTILE_PROBLEM) in page
    assert esc("bench <b>run</b>") in page
    # the only script elements: the page's own script and the JSON data block
    assert len(re.findall(r"<script\b", page)) == 2
    assert len(re.findall(r"</script>", page)) == 2


def test_content_security_policy_names_the_page_script_and_style(page):
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    policy = policy.replace("&#x27;", "'")
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["img-src"] == "data:"
    assert "unsafe" not in policy and "http" not in policy
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    digest = lambda text: "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
    assert directives["script-src"] == digest(script)
    assert directives["style-src"] == digest(style)
    # nothing on the page loads from anywhere but data: URIs and in-page anchors
    for url in re.findall(r'\b(?:src|href)="([^"]*)"', page):
        assert url.startswith(("data:", "#")), url


def test_json_for_script_cannot_close_the_element():
    hostile = {"a": "</script><script>alert(1)</script>", "b": "<!-- & \u2028\u2029 -->", "c": float("nan")}
    text = json_for_script(hostile)
    for ch in "<>&\u2028\u2029":
        assert ch not in text
    back = json.loads(text)
    assert back["a"] == hostile["a"] and back["b"] == hostile["b"] and back["c"] is None


def test_tag_escapes_attributes_and_content():
    html = tag("a", "<x>", href='#" onclick="evil()', title="a&b")
    assert html == '<a href="#&quot; onclick=&quot;evil()" title="a&amp;b">&lt;x&gt;</a>'


# ------------------------------------------------------------------------------------------ figures


def _figures(page: str) -> list[str]:
    return [base64.b64decode(uri).decode()
            for uri in re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', page)]


def test_every_figure_is_a_drawn_svg(page):
    svgs = _figures(page)
    # fast_p (all runs), fast_p per level, bench by turn, speedups, verdicts, flags, numerics
    assert len(svgs) == 7 == page.count('class="plot"')
    for svg in svgs:
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert svg.count("<path") > 20  # axes, ticks, text as paths, data


def test_a_baseline_adds_its_own_curves_and_speedups(runs_dir, tmp_path):
    table = tmp_path / "compile_ms.json"
    table.write_text(json.dumps({"level1/1_softmax": 1.0, "level1/2_relu": 4.0, "level2/3_gemm": 2.0}))
    runs = load_runs([runs_dir / "bench"])
    out = tmp_path / "r.html"
    write_report(runs, out, {"compile": json.loads(table.read_text())}, settings=FAST)
    page = out.read_text()
    # fast_p + per level + by turn for each of eager and compile, a speedup figure each, 3 breakdowns
    assert page.count('class="plot"') == 3 * 2 + 2 + 3
    assert 'alt="fast_p against compile"' in page and 'alt="speedup of accepted solutions against compile"' in page


# -------------------------------------------------------------------------------------------- numbers


def _data(page: str) -> dict:
    text = re.search(r'<script type="application/json" id="kj-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text)


def test_scores_are_score_summary_itself(page, runs_dir):
    data = _data(page)
    runs = load_runs([runs_dir / "bench", runs_dir / "log" / "run.jsonl"])
    for run, shown in zip(runs, data["runs"]):
        assert shown["summary"] == json.loads(json.dumps(score.summary(run.rows, n_boot=FAST.n_boot)))
    # the score table prints those values with their intervals
    fast1 = data["runs"][0]["summary"]["baselines"]["eager"]["fast_p"]["fast_1"]
    assert f"{fast1['value']:.2f} [{fast1['ci'][0]:.2f}, {fast1['ci'][1]:.2f}]" in page


def test_two_runs_are_compared(page):
    compared = _data(page)["compare"]
    assert len(compared) == 1
    assert compared[0]["a"]["label"] == "bench <b>run</b>" and compared[0]["b"]["label"] == "log"
    assert compared[0]["problems"]["shared"] == 3
    assert 'id="compare"' in page


# ------------------------------------------------------------------------------- table and details


def test_every_row_links_to_its_details_and_source(page):
    rows = re.findall(r"<tr data-[^>]*>", page)
    assert len(rows) == 16
    for n in range(16):
        assert f'href="#v{n}"' in page and f'id="v{n}"' in page
        assert f'href="#v{n}-src"' in page and f'id="v{n}-src"' in page
    assert 'data-verdict="correct (held)"' in page


def test_details_carry_timing_profile_numerics_findings_and_source(page):
    details = page[page.index('id="v0"'):page.index('id="v1"')]
    for text in ("median_ms", "my_softmax_kernel", "max_rel_err", "seccomp", "landlock", "device", "tf32"):
        assert text in details, text
    assert esc("return x * 2") in details
    gemm = page[page.index('id="v6"'):page.index('id="v7"')]
    assert "torch_compute" in gemm and esc("torch.matmul <in> forward") in gemm
    reply = page[page.index('id="v7"'):page.index('id="v8"')]
    assert "model reply (no code was extracted)" in reply and esc("<script>window.__pwned='reply'</script>") in reply


def test_source_outside_the_run_folder_is_not_read(tmp_path):
    root = write_bench_run(tmp_path / "bench")
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'do-not-show'\n")
    rows = [json.loads(line) for line in (root / "verdicts.jsonl").read_text().splitlines()]
    rows[0]["solution_file"] = "../secret.py"
    (root / "solutions" / rows[1]["solution_file"].split("/")[-1]).write_text("changed after judging\n")
    (root / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.html"
    write_report(load_runs([root]), out, settings=FAST)
    page = out.read_text()
    assert "do-not-show" not in page
    assert "points outside the run folder" in page
    assert "the file changed since it was judged" in page


def test_no_source_leaves_solutions_out(runs_dir, tmp_path):
    out = tmp_path / "r.html"
    write_report(load_runs([runs_dir / "bench"]), out,
                 settings=ReportSettings(n_boot=50, band_boot=0, with_source=False))
    page = out.read_text()
    assert "return x * 2" not in page and '-src"' not in page
    assert page.count('class="plot"') == 7


def test_unjudgeable_rows_are_shown_and_left_out_of_the_scores(tmp_path):
    judged = [verdict("level1/1_softmax", speedup=1.2), verdict("level1/2_relu", "wrong_output")]
    rows = judged + [unjudgeable("level1/3_sum"), unjudgeable("level1/2_relu", "reference_failed")]
    log = write_run_log(tmp_path / "u" / "run.jsonl", rows)
    plain = write_run_log(tmp_path / "p" / "run.jsonl", [dict(v) for v in judged])
    out = tmp_path / "r.html"
    write_report(load_runs([log, plain], ["with", "without"]), out, settings=FAST)
    page = out.read_text()
    with_, without = _data(page)["runs"]
    assert with_["summary"]["baselines"] == without["summary"]["baselines"]
    assert with_["summary"]["left_out"] == {"rows": 2, "problems": 1,
                                            "by_kind": {"degenerate_reference": 1, "reference_failed": 1}}
    assert esc("with: left out of every score: 2 unjudgeable row(s)") in page
    assert "without: left out" not in page
    assert 'data-verdict="unjudgeable"' in page and 'class="v-unjudgeable"' in page
    assert esc("degenerate_reference: degenerate reference <b>here</b>") in page   # kind, then the escaped reason
    assert "outcome figures" in page and "ref_rms" in page
    assert _data(page)["compare"][0]["a"]["left_out"]["rows"] == 2


# ------------------------------------------------------------------------------------------ command


def test_report_command(runs_dir, tmp_path, capsys):
    out = tmp_path / "sub" / "r.html"
    assert cli("report", str(runs_dir / "bench"), "--out", str(out), "--n-boot", "50", "--band-boot", "10") == 0
    assert out.exists() and "figure(s)" in capsys.readouterr().err
    assert cli("report", str(tmp_path / "missing"), "--out", str(out)) == 3
    empty = tmp_path / "empty.jsonl"
    empty.write_text("not json\n")
    assert cli("report", str(empty), "--out", str(out)) == 3
    assert "no verdicts" in capsys.readouterr().err
    assert cli("report", str(runs_dir / "bench"), "--out", str(out), "--labels", "a,b") == 3
    assert cli("report", str(runs_dir / "bench"), "--out", str(out), "--n-boot", "-1") == 2


def test_missing_extra_names_it():
    with pytest.raises(MissingExtra, match=r"pip install 'kerneljudge\[report\]'"):
        require("kerneljudge_no_such_module", "report", "the report")
