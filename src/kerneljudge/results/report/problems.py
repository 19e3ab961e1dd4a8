"""The per-problem table (one row per verdict, filtered and sorted by the page's script) and the verdict
details it links to: reason, error excerpt, findings, timing statistics, top kernels, numerics and the
solution's source; with a noise floor (--floor), where each speedup lies on it. All of it is untrusted text,
escaped on the way in."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

from kerneljudge.results import verdict_rows
from kerneljudge.results.export import numerics_value
from kerneljudge.results.noise_floor import NOT_TIMED, floor_line, floor_summary, position
from kerneljudge.results.report.html import Cell, Markup, esc, fmt, pre, table, tag
from kerneljudge.results.runs import Run, read_source
from kerneljudge.results.report.tables import VERDICT_ORDER, ordered, verdict_label

REASON_CHARS = 140


def _d(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


def _l(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (list, tuple)) else []


def _num(x: Any) -> Optional[float]:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _verdict_class(label: str) -> str:
    return {"correct": "v-correct", "correct (held)": "v-held", "unjudgeable": "v-unjudgeable"}.get(label, "v-bad")


def _noise(v: Mapping[str, Any], floor: Optional[Mapping[str, Any]]) -> tuple[str, str]:
    """Where the row's speedup lies on the noise floor: a label for the table ("within noise", "above noise",
    "below noise" or "-") and a line for the details (the band and the identity copy it came from, or why none)."""
    if floor is None:
        return "-", ""
    where, found = position(v, floor)
    if where is None:   # say why only for a speedup that could have been placed
        return "-", "" if found.get("why") == NOT_TIMED else str(found.get("why", ""))
    low, high = found["band"]
    ci = found.get("ci95")
    identity = f"{found['speedup']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
    return where.replace("_", " "), (f"{where.replace('_', ' ')}: band [{low:.3f}, {high:.3f}] on the "
                                     f"{found['clock']} clock, from the identity copy's {identity}")


def floor_note(runs: Sequence[Run], floor: Mapping[str, Any], source: str) -> Markup:
    """Per run, how its accepted, timed speedups lie on the noise floor (noise_floor.floor_line)."""
    lines = [f"{run.label}: {floor_line(floor_summary(run.rows, floor, source))}" for run in runs]
    return tag("p", "Noise floor: a speedup inside its problem's identity-copy band for its clock is within noise "
                    "(the judge gives an identity copy as much). " + " ".join(lines), class_="note")



def _reason(v: Mapping[str, Any]) -> str:
    """The verdict's reason; for an unjudgeable one, after the problem outcome's kind."""
    if verdict_rows.is_unjudgeable(v):
        return f"{verdict_rows.outcome_kind(v)}: {v.get('reason') or ''}"
    return str(v.get("reason") or "")


def _short(text: Any) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= REASON_CHARS else s[:REASON_CHARS - 3] + "..."


def _index(v: Mapping[str, Any], name: str) -> Optional[int]:
    x = v.get(name)
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def problem_table(runs: Sequence[Run], with_source: bool = True, floor: Optional[Mapping[str, Any]] = None) -> Markup:
    """Filters, then the table; row n links to #v{n} (and #v{n}-src). With a floor, a "noise" column after the
    speedup."""
    several = len(runs) > 1
    noise = ["noise"] if floor is not None else []
    headers = (["run"] if several else []) + ["problem", "level", "backend", "sample", "turn", "verdict", "speedup",
                                              *noise, "ref ms", "sol ms", "numerics", "flags", "reason"] + \
        (["source"] if with_source else [])
    first_num = 1 if several else 0
    numeric = [first_num + i for i in ((1, 3, 4, 6, 8, 9) if noise else (1, 3, 4, 6, 7, 8))]
    rows, attrs = [], []
    n = 0
    for run in runs:
        for v in run.rows:
            label = verdict_label(v)
            level = verdict_rows.level_of(v)
            speedup = _num(v.get("speedup"))
            cells: list[Any] = ([run.label] if several else []) + [
                Cell(tag("a", verdict_rows.problem_of(v), href=f"#v{n}"), verdict_rows.problem_of(v)),
                Cell(level, float(level)),
                v.get("backend") or "-",
                Cell(fmt(_index(v, "sample")), _index(v, "sample")), Cell(fmt(_index(v, "turn")), _index(v, "turn")),
                Cell(label, cls=_verdict_class(label)),
                Cell("-" if speedup is None else f"{speedup:.2f}x", speedup),
                *([_noise(v, floor)[0]] if noise else []),
                Cell(fmt(_num(v.get("ref_ms"))), _num(v.get("ref_ms"))),
                Cell(fmt(_num(v.get("sol_ms"))), _num(v.get("sol_ms"))),
                _d(v.get("numerics")).get("class") or "-", ", ".join(str(f) for f in _l(v.get("flags"))),
                Cell(_short(_reason(v)), cls="reason")] + \
                ([Cell(tag("a", "source", href=f"#v{n}-src"))] if with_source else [])
            rows.append(cells)
            attrs.append({"data_run": run.label, "data_verdict": label, "data_level": str(level),
                          "data_backend": str(v.get("backend") or "-"),
                          "data_accepted": "1" if v.get("accepted") else "0"})
            n += 1
    return Markup(_filters(runs) + tag("div", table(headers, rows, id="problems", numeric=numeric, row_attrs=attrs),
                                       class_="scroll"))


def _select(name: str, label: str, values: Sequence[str]) -> Markup:
    options = [tag("option", f"all {label}", value="")] + [tag("option", v, value=v) for v in values]
    return tag("label", Markup(esc(label) + " " + tag("select", Markup("".join(options)), data_filter=name,
                                                          id=f"f-{name}")))


def _filters(runs: Sequence[Run]) -> Markup:
    rows = [v for r in runs for v in r.rows]
    parts = [tag("input", type="search", id="f-text", placeholder="filter: problem, reason, flag ...",
                 aria_label="filter rows")]
    if len(runs) > 1:
        parts.append(_select("run", "runs", [r.label for r in runs]))
    parts.append(_select("verdict", "verdicts", ordered({verdict_label(v) for v in rows}, VERDICT_ORDER)))
    parts.append(_select("level", "levels", [str(x) for x in sorted({verdict_rows.level_of(v) for v in rows})]))
    parts.append(_select("backend", "backends", sorted({str(v.get("backend") or "-") for v in rows})))
    parts.append(tag("label", Markup(tag("input", type="checkbox", id="f-accepted") + esc(" accepted only"))))
    parts.append(tag("span", "", id="f-count", class_="meta"))
    return tag("div", Markup("".join(parts)), class_="filters")


# ------------------------------------------------------------------------------------------- details


def _kv(pairs: Sequence[tuple[str, Any]]) -> Markup:
    items = [Markup(tag("dt", k) + tag("dd", v if isinstance(v, Markup) else fmt(v))) for k, v in pairs
             if v not in (None, "", [], {})]
    return tag("dl", Markup("".join(items)), class_="kv") if items else Markup("")


def _compact(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=str)


def _timing(v: Mapping[str, Any]) -> Markup:
    keys = ("median_ms", "mean_ms", "min_ms", "max_ms", "std_ms", "ci95_low_ms", "ci95_high_ms", "samples",
            "warmup_calls", "clock")
    rows = [[who] + [fmt(_d(v.get(f"{who}_timing")).get(k)) for k in keys] for who in ("ref", "sol")
            if v.get(f"{who}_timing")]
    return table(["", *keys], rows) if rows else Markup("")


def _profile(v: Mapping[str, Any]) -> Markup:
    rows = [[r.get("name"), r.get("class"), fmt(_num(r.get("device_us"))), fmt(r.get("calls")),
             "-" if _num(r.get("share")) is None else f"{100 * float(r['share']):.1f}%"]
            for r in map(_d, _l(v.get("profile"))) if r.get("class") != "error"]
    errors = [r.get("error") for r in map(_d, _l(v.get("profile"))) if r.get("class") == "error"]
    out = table(["kernel / op", "class", "time (us)", "calls", "share"], rows) if rows else Markup("")
    return Markup(out + (tag("p", f"profiling failed: {errors[0]}", class_="note") if errors else ""))


def _findings(v: Mapping[str, Any]) -> Markup:
    rows = [[f.get("code"), fmt(f.get("line")), "yes" if f.get("blocking") else "no", f.get("message")]
            for f in map(_d, _l(v.get("findings")))]
    return table(["finding", "line", "blocking", "message"], rows) if rows else Markup("")


def _numerics(v: Mapping[str, Any]) -> Markup:
    numerics = _d(v.get("numerics"))
    pairs = [(k, numerics_value(v, k)) for k in ("max_abs_err", "max_rel_err", "rel_l2", "frac_over_tol")]
    pairs += [("class", numerics.get("class")), ("contract", numerics.get("contract") or v.get("contract")),
              ("why wrong", numerics.get("why_wrong"))]
    return _kv(pairs)


def _facts(v: Mapping[str, Any], floor: Optional[Mapping[str, Any]] = None) -> Markup:
    sandbox = _d(v.get("sandbox"))
    usage = _d(v.get("usage"))
    return _kv([
        ("reason", v.get("reason")), ("accepted", bool(v.get("accepted"))),
        ("problem outcome", verdict_rows.outcome_kind(v) if verdict_rows.is_unjudgeable(v) else None),
        ("outcome figures",
         _compact(_d(v.get("problem_outcome")).get("figures")) if verdict_rows.is_unjudgeable(v) else None),
        ("flags", ", ".join(str(f) for f in _l(v.get("flags")))),
        ("speedup", _num(v.get("speedup"))), ("clock", v.get("clock")),
        ("noise floor", _noise(v, floor)[1] or None),
        ("speedup (device)", _num(v.get("speedup_device"))),
        ("speedup vs fp32 reference", _num(v.get("speedup_vs_fp32_reference"))),
        ("ref ms", _num(v.get("ref_ms"))), ("sol ms", _num(v.get("sol_ms"))),
        ("ref device ms", _num(v.get("ref_device_ms"))), ("sol device ms", _num(v.get("sol_device_ms"))),
        ("device", " ".join(str(x) for x in (v.get("device"), v.get("device_name")) if x)),
        ("precision / policy / preset", " / ".join(str(v.get(k) or "-") for k in ("precision", "policy", "preset"))),
        ("shapes", _compact(v["shapes"]) if v.get("shapes") else None),
        ("sandbox", (", ".join(str(x) for x in _l(sandbox.get("layers"))) or "-")
         + (f"; missing: {', '.join(str(x) for x in _l(sandbox.get('missing')))}" if sandbox.get("missing") else "")
         if sandbox else None),
        ("build s / wall s", f"{fmt(_num(v.get('build_s')))} / {fmt(_num(v.get('wall_s')))}"),
        ("phases s", _compact(v["phases_s"]) if v.get("phases_s") else None),
        ("model", v.get("model")), ("item", v.get("item")),
        ("extraction", v.get("extraction_note") or v.get("extraction")),
        ("tokens", f"{usage.get('prompt_tokens')}+{usage.get('completion_tokens')}" if usage else None),
        ("versions", _compact(v["versions"]) if v.get("versions") else None),
        ("problem", v.get("problem")), ("problem sha256", v.get("problem_sha256")),
        ("solution", v.get("solution")), ("solution sha256", v.get("solution_sha256")),
    ])


def _source(run: Run, v: Mapping[str, Any], n: int, limit_bytes: int) -> Markup:
    src = read_source(run, v, limit_bytes)
    what = "model reply (no code was extracted)" if src.kind == "reply" else "solution source"
    if src.text is None:
        return tag("p", f"{what}: not shown ({src.note or 'no file'})" + (f": {src.path}" if src.path else ""),
                   class_="note", id=f"v{n}-src")
    lines = src.text.count("\n") + (0 if src.text.endswith("\n") else 1)
    summary = f"{what}: {src.path} ({lines} lines" + (f"; {src.note}" if src.note else "") + ")"
    return tag("details", Markup(tag("summary", summary) + pre(src.text)), id=f"v{n}-src", open=True)


def details_section(runs: Sequence[Run], limit_bytes: int, with_source: bool = True,
                    floor: Optional[Mapping[str, Any]] = None) -> Markup:
    parts = []
    n = 0
    several = len(runs) > 1
    for run in runs:
        for v in run.rows:
            label = verdict_label(v)
            speedup = _num(v.get("speedup"))
            where = " ".join(x for x in (f"s{_index(v, 'sample')}" if _index(v, "sample") is not None else "",
                                         f"t{_index(v, 'turn')}" if _index(v, "turn") is not None else "") if x)
            title = " · ".join(x for x in ([run.label] if several else []) + [verdict_rows.problem_of(v), where, label]
                               if x) \
                + (f" · {speedup:.2f}x" if speedup is not None else "")
            body = [tag("summary", title), _facts(v, floor)]
            if v.get("error_excerpt"):
                body += [tag("h3", "error excerpt"), pre(v["error_excerpt"], "excerpt")]
            for heading, block in (("static analysis", _findings(v)), ("numerics", _numerics(v)),
                                   ("timing", _timing(v)), ("top kernels (one profiled call)", _profile(v))):
                if block:
                    body += [tag("h3", heading), block]
            if with_source:
                body.append(_source(run, v, n, limit_bytes))
            body.append(tag("p", tag("a", "back to the table", href="#problems")))
            parts.append(tag("details", Markup("".join(body)), class_="verdict", id=f"v{n}"))
            n += 1
    return Markup("".join(parts))
