"""The page's one stylesheet and one script (both allowed by hash in its content security policy).

The script only filters, sorts and opens elements that are already on the page: it never builds HTML
from data, so nothing it handles can become markup.
"""

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1280px;
padding:0 20px 60px;color:#1b1b1b}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
nav a{margin-right:12px}
.meta{color:#555}
figure{margin:10px 0 18px}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555;font-size:12px}
table.data{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
table.data th,table.data td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
table.data th{background:#f5f5f5;position:sticky;top:0}
#problems th{cursor:pointer;user-select:none}
div.scroll{overflow-x:auto}td.reason{max-width:420px}
#problems th.asc::after{content:" \\25B2"}#problems th.desc::after{content:" \\25BC"}
td.v-correct{color:#17612b}td.v-held{color:#8a5a00}td.v-bad{color:#a1221b}td.v-unjudgeable{color:#555}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:8px 0}
.filters input[type=search]{min-width:260px}
pre.code{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;overflow:auto;max-height:560px;
white-space:pre;font-size:12px}
pre.excerpt{background:#fff5f4;border:1px solid #f0d0cc;padding:8px;overflow:auto;max-height:320px;
white-space:pre-wrap;font-size:12px}
details.verdict{border:1px solid #ddd;border-radius:4px;margin:6px 0;padding:4px 10px}
details.verdict>summary{cursor:pointer;font-weight:600}
details.verdict[open]{background:#fcfcfc}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}
dl.kv dt{color:#555}dl.kv dd{margin:0;word-break:break-word}
.note{color:#8a5a00}
"""

SCRIPT = """
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    for (var e = el; e; e = e.parentElement) { if (e.tagName === "DETAILS") { e.open = true; } }
    if (el) { el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  var table = document.getElementById("problems");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  rows.forEach(function (r) { r.kjText = r.textContent.toLowerCase(); });
  var text = document.getElementById("f-text");
  var accepted = document.getElementById("f-accepted");
  var count = document.getElementById("f-count");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));

  function apply() {
    var q = text.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (r) {
      var ok = !q || r.kjText.indexOf(q) !== -1;
      selects.forEach(function (s) {
        if (ok && s.value !== "" && r.getAttribute("data-" + s.getAttribute("data-filter")) !== s.value) { ok = false; }
      });
      if (ok && accepted.checked && r.getAttribute("data-accepted") !== "1") { ok = false; }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " rows shown";
  }
  text.addEventListener("input", apply);
  accepted.addEventListener("change", apply);
  selects.forEach(function (s) { s.addEventListener("change", apply); });

  function key(r, col, numeric) {
    var cell = r.cells[col];
    var v = cell ? (cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent) : "";
    if (!numeric) { return v.toLowerCase(); }
    var x = parseFloat(v);
    return isNaN(x) ? null : x;
  }
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th) {
    th.addEventListener("click", function () {
      var col = parseInt(th.getAttribute("data-col"), 10);
      var numeric = th.getAttribute("data-type") === "num";
      var dir = th.classList.contains("asc") ? -1 : 1;
      heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
      th.classList.add(dir === 1 ? "asc" : "desc");
      rows.sort(function (a, b) {
        var x = key(a, col, numeric), y = key(b, col, numeric);
        if (x === y) { return 0; }
        if (x === null) { return 1; }
        if (y === null) { return -1; }
        return (x < y ? -1 : 1) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
"""
