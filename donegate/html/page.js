// donegate report --html: filters, the session rows (one page at a time) and a stop's details.
// Every text from the ledger goes into the page as textContent, never as HTML.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var CODES = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var BLOCKING = { block: 1, hint: 1, error: 1 };
  var PAGE = 100;
  var V = D.verdicts;

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function money(x) { return x >= 1 ? "$" + x.toFixed(2) : x ? "$" + x.toFixed(4).replace(/0+$/, "").replace(/\.$/, "") : "$0"; }
  function secs(x) { return x == null ? "-" : x < 1 && x > 0 ? Math.round(x * 1000) + " ms" : x < 100 ? x.toFixed(1) + "s" : (x / 60).toFixed(1) + " min"; }

  // Decode each row's stops once: [verdict index, leak, cached, label] per stop, plus masks to filter on.
  var rows = D.rows.map(function (r) {
    var stops = [], mask = 0, blocks = 0, lab = 0, m, re = /(.)(!?)(\*?)([+-]?)/g;
    while ((m = re.exec(r[5])) !== null) {
      var v = CODES.indexOf(m[1]);
      stops.push([v, !!m[2], !!m[3], m[4]]);
      mask |= 1 << Math.min(v, 30);
      if (BLOCKING[V[v]]) { blocks++; if (!m[4]) lab |= 4; }
      if (m[4] === "+") lab |= 1;
      if (m[4] === "-") lab |= 2;
    }
    return { sid: r[0], cfg: r[1], repo: D.repos[r[2]], d0: D.days[r[3]], d1: D.days[r[4]], stops: stops, left: r[6],
             cost: r[7], secs: r[8], detail: r[9], last: D.days[r[4]] + " " + r[10], mask: mask, blocks: blocks, lab: lab,
             acost: r[11], asecs: r[12] };
  });

  var state = { cfg: "", verdicts: {}, left: false, label: "", from: "", to: "", q: "", shown: 0, list: rows };
  var tbody = document.getElementById("rows");
  var more = document.getElementById("more");
  var detail = document.getElementById("detail");
  var selected = null;

  // -- filters ------------------------------------------------------------------------------------
  var filters = document.getElementById("filters");
  var cfgSel = el("select", { id: "f-config" }, [el("option", { value: "", text: "all configurations" })].concat(
    D.configs.map(function (c, i) { return el("option", { value: String(i), text: c }); })));
  var labSel = el("select", { id: "f-label" }, [["", "any"], ["j", "a justified block"], ["u", "an unjustified block"],
    ["n", "an unlabelled block"]].map(function (o) { return el("option", { value: o[0], text: o[1] }); }));
  var leftBox = el("input", { type: "checkbox", id: "f-left" });
  var from = el("input", { type: "date", id: "f-from" }), to = el("input", { type: "date", id: "f-to" });
  if (D.days.length) { [from, to].forEach(function (x) { x.min = D.days[0]; x.max = D.days[D.days.length - 1]; }); }
  var search = el("input", { type: "search", id: "f-search", placeholder: "session id or repository" });
  filters.appendChild(el("label", null, ["configuration", cfgSel]));
  filters.appendChild(el("label", null, ["sessions with", labSel]));
  filters.appendChild(el("label", null, [leftBox, "left for a person only"]));
  filters.appendChild(el("label", null, ["from", from, "to", to]));
  filters.appendChild(el("label", null, ["find", search]));
  cfgSel.onchange = function () { state.cfg = cfgSel.value; apply(); };
  labSel.onchange = function () { state.label = labSel.value; apply(); };
  leftBox.onchange = function () { state.left = leftBox.checked; apply(); };
  from.onchange = function () { state.from = from.value; apply(); };
  to.onchange = function () { state.to = to.value; apply(); };
  search.oninput = function () { state.q = search.value.trim().toLowerCase(); apply(); };

  // The legend is the verdict filter: a pressed chip keeps the sessions with a stop of that verdict.
  var legend = document.getElementById("legend");
  V.forEach(function (name, i) {
    var chip = el("button", { type: "button", cls: "chip", "data-verdict": name, "aria-pressed": "false" },
      [el("span", { cls: "sw", style: "background:" + D.colours[i] }), name.replace("_", " "),
       el("span", { cls: "c", text: (D.stops_by_verdict[name] || 0).toLocaleString("en") })]);
    chip.onclick = function () {
      var on = chip.getAttribute("aria-pressed") !== "true";
      chip.setAttribute("aria-pressed", String(on));
      if (on) state.verdicts[i] = 1; else delete state.verdicts[i];
      apply();
    };
    legend.appendChild(chip);
  });
  [["leak", "transcript leak (ringed)"], ["cached", "cached result (dot)"], ["lab-j", "labelled justified"],
   ["lab-u", "labelled unjustified"]].forEach(function (f) {
    legend.appendChild(el("span", { cls: "chip flag" }, [el("span", { cls: "mark " + f[0], style: "background:#c9d0d8;width:12px;height:12px;cursor:default" }), f[1]]));
  });

  function matches(r) {
    if (state.cfg !== "" && r.cfg !== +state.cfg) return false;
    if (state.left && !r.left) return false;
    if (state.from && r.d1 < state.from) return false;
    if (state.to && r.d0 > state.to) return false;
    if (state.label === "j" && !(r.lab & 1)) return false;
    if (state.label === "u" && !(r.lab & 2)) return false;
    if (state.label === "n" && !(r.lab & 4)) return false;
    var want = 0;
    for (var k in state.verdicts) want |= 1 << Math.min(+k, 30);
    if (want && !(r.mask & want)) return false;
    if (state.q && r.sid.toLowerCase().indexOf(state.q) < 0 && r.repo.toLowerCase().indexOf(state.q) < 0) return false;
    return true;
  }

  function apply() {
    state.list = rows.filter(matches);
    state.shown = 0;
    tbody.textContent = "";
    hide();
    var stops = 0;
    state.list.forEach(function (r) { stops += r.stops.length; });
    document.getElementById("count").textContent = state.list.length.toLocaleString("en") + " of " +
      rows.length.toLocaleString("en") + " sessions listed, " + stops.toLocaleString("en") + " stops" +
      (D.sessions > rows.length ? " (" + D.sessions.toLocaleString("en") + " sessions in the ledger)" : "");
    document.querySelectorAll("#summary tr.cfg").forEach(function (tr) {
      tr.hidden = state.cfg !== "" && tr.hasAttribute("data-config") && tr.getAttribute("data-config") !== D.configs[+state.cfg];
    });
    showMore();
  }

  // -- rows ---------------------------------------------------------------------------------------
  function row(r, n) {
    var tl = el("div", { cls: "tl" });
    r.stops.forEach(function (s, i) {
      var name = V[s[0]];
      var cls = "mark" + (s[1] ? " leak" : "") + (s[2] ? " cached" : "") + (s[3] === "+" ? " lab-j" : s[3] === "-" ? " lab-u" : "");
      var b = el("button", { type: "button", cls: cls, style: "background:" + D.colours[s[0]], "data-verdict": name,
        "data-stop": String(i), title: "stop " + (i + 1) + ": " + name + (s[1] ? ", leak" : "") + (s[2] ? ", cached" : ""),
        "aria-label": "stop " + (i + 1) + ": " + name });
      b.onclick = function () { open(r, i, b); };
      tl.appendChild(b);
    });
    var badge = r.left ? el("span", { cls: "badge" + (r.left === 2 ? " gave" : ""), text: r.left === 2 ? "gave up" : "left" }) : null;
    var repo = r.repo.split("/").filter(Boolean).pop() || r.repo;
    var tr = el("tr", { cls: r.left ? "left" : "", "data-session": r.sid }, [
      el("td", null, [badge]),
      el("td", { cls: "sid", title: r.sid, text: r.sid.length > 14 ? r.sid.slice(0, 12) + "…" : r.sid }),
      el("td", { text: D.configs[r.cfg] }),
      el("td", { title: r.repo, text: repo }),
      el("td", { cls: "n", text: r.last }),
      el("td", null, [tl]),
      el("td", { cls: "n", text: String(r.blocks) }),
      // the agent's own session (its model calls; "unpriced": a model the price table does not know), the gate's share after it
      el("td", { cls: "n", text: (r.acost == null ? "-" : r.acost === "?" ? "unpriced" : money(r.acost)) + " (" + money(r.cost) + ")" }),
      el("td", { cls: "n", text: secs(r.asecs) + " (" + secs(r.secs) + ")" })]);
    return tr;
  }

  function showMore() {
    var end = Math.min(state.list.length, state.shown + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = state.shown; i < end; i++) frag.appendChild(row(state.list[i], i));
    tbody.appendChild(frag);
    state.shown = end;
    more.hidden = end >= state.list.length;
    more.textContent = "show " + Math.min(PAGE, state.list.length - end) + " more of " + (state.list.length - end).toLocaleString("en");
  }
  more.onclick = showMore;

  // -- one stop -----------------------------------------------------------------------------------
  function dl(pairs) {
    var d = el("dl");
    pairs.forEach(function (p) { if (p[1] != null && p[1] !== "") { d.appendChild(el("dt", { text: p[0] })); d.appendChild(el("dd", { text: String(p[1]) })); } });
    return d;
  }

  // The details open in a row right under the session's row (one at a time).
  var holder = el("tr", { cls: "detail-row" }, [el("td", { colspan: "9" }, [detail])]);

  function open(r, i, mark) {
    if (selected) selected.classList.remove("sel");
    selected = mark; mark.classList.add("sel");
    var tr = mark.closest("tr");
    tr.parentNode.insertBefore(holder, tr.nextSibling);
    holder.hidden = false;
    var s = r.stops[i], name = V[s[0]];
    var stops = r.detail >= 0 ? D.details[r.detail] : null;
    var d = stops ? stops[i] : null;
    detail.textContent = "";
    var close = el("button", { type: "button", cls: "close", text: "close" });
    close.onclick = hide;
    detail.appendChild(close);
    detail.appendChild(el("h3", { text: "stop " + (d && d.n != null ? d.n : i + 1) + " of " + r.stops.length }));
    detail.appendChild(el("div", { cls: "sid", text: r.sid }));
    detail.appendChild(el("p", null, [el("span", { cls: "pill", style: "background:" + D.colours[s[0]], text: name.replace("_", " ") }),
      s[1] ? " leak" : "", s[2] ? " cached" : ""]));
    if (!d) {
      detail.appendChild(el("p", { cls: "muted", text: "This stop's details are not in the page (it keeps them for the sessions " +
        "shown first). Run: donegate report --session " + r.sid }));
      detail.hidden = false;
      return;
    }
    detail.appendChild(dl([["time", d.t], ["configuration", D.configs[r.cfg]], ["repository", r.repo],
      ["request (sealed)", (D.requests || [])[D.repos.indexOf(r.repo)] || null],
      ["tests passing", d.of != null ? d.p + " of " + d.of : null], ["gate time", secs(d.d)],
      ["scope check", d.sd != null ? secs(d.sd) : null], ["acceptance run", d.ad != null ? secs(d.ad) : null], ["review", d.rv ? d.rv + ", " + secs(d.rd) : null],
      ["reviewer cost", d.rc != null ? money(d.rc) : null], ["ref", d.ref]]));
    detail.appendChild(el("h4", { text: "What the agent was shown" }));
    if (d.f != null) detail.appendChild(el("pre", { id: "feedback", text: D.texts[d.f] }));
    else detail.appendChild(el("p", { id: "feedback", cls: "muted", text: name === "gave_up" ? "Nothing: the stop was let through and the session handed to a person."
      : name === "appealed" ? "Nothing more: the appeal let the stop through; a person decides on it."
      : BLOCKING[name] ? "No feedback was recorded for this stop." : "Nothing: the stop was let through." }));
    if (d.sa) { detail.appendChild(el("h4", { text: "What the agent said last" })); detail.appendChild(el("pre", { id: "said", text: d.sa })); }
    if (d.ap) detail.appendChild(el("p", { id: "appeal", text: "the agent's appeal, " + d.ap }));
    if (d.tm) detail.appendChild(el("p", { id: "tamper", cls: "note", text: "tamper: " + d.tm }));
    if (d.by) detail.appendChild(el("p", { cls: "note", text: "blocked by: " + d.by }));
    if (d.br) detail.appendChild(el("p", { text: "breaker: " + d.br }));
    if (s[2]) detail.appendChild(el("p", { cls: "hint", text: "cached: the tests did not run again, nothing they read had changed" }));
    if (d.lk) detail.appendChild(el("p", { cls: "note", text: "leak: " + d.lk }));
    if (d.rf) {
      detail.appendChild(el("h4", { text: "Reviewers' findings (in the ledger)" }));
      detail.appendChild(el("ul", null, d.rf.map(function (f) { return el("li", { text: f }); })));
    }
    if (d.lb) detail.appendChild(el("p", { text: "labelled " + d.lb + (d.ln ? ": " + d.ln : "") }));
    else if (BLOCKING[name]) detail.appendChild(el("p", { cls: "hint", text: "Label it: donegate label " + d.ref + " justified|unjustified" }));
    if (d.dc) detail.appendChild(el("p", { id: "decision", text: "a person " + d.dc }));
    else if (name === "appealed" || name === "gave_up") detail.appendChild(el("p", { cls: "hint", text: "Decide: donegate approve " + d.ref + ", or donegate reject " + d.ref + " --note WHY" }));
    detail.hidden = false;
  }
  function hide() { holder.hidden = true; detail.hidden = true; if (selected) selected.classList.remove("sel"); selected = null; }
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") hide(); });

  apply();
  window.donegateReady = performance.now();
  document.documentElement.setAttribute("data-ready", "1");
})();
