// memeval report: draws the charts and tables from the JSON embedded in this page.
// Every string from a suite or an engine goes through textContent or an attribute value,
// never through innerHTML, so a pack holding markup stays text.
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("memeval-data").textContent);
  var app = document.getElementById("app");

  // ---- DOM helpers ------------------------------------------------------------------------

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, children) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = String(value);
      else node.setAttribute(key, String(value));
    });
  }

  function append(node, children) {
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
  }

  function section(title, children, note) {
    var parts = [el("h2", { text: title })].concat(children);
    if (note) parts.push(el("p", { class: "note", text: note }));
    return el("section", {}, parts);
  }

  function tooltip(text) {
    return svg("title", { text: text });
  }

  // ---- number formats ---------------------------------------------------------------------

  function pct(v) {
    return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%";
  }

  // Tables show the strings memeval.report.numbers wrote into the data; these two follow
  // the same rule for what only the charts show (axes, tooltips).
  function num(v, unit) {
    if (v === null || v === undefined) return "–";
    if (unit === "share") return pct(v);
    if (unit === "ms") return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3)) + " ms";
    if (unit === "usd") {
      if (v === 0) return "$0";
      if (Math.abs(v) >= 0.01) return "$" + v.toFixed(4);
      return "$" + v.toFixed(1 - Math.floor(Math.log10(Math.abs(v))));
    }
    if (unit === "score") return v.toFixed(3);
    var shown = v === Math.round(v) ? v.toFixed(0) : v.toFixed(1);
    return unit === "tokens" ? shown + " tokens" : shown;
  }

  function delta(v, unit) {
    if (v === null || v === undefined) return "–";
    var sign = v >= 0 ? "+" : "-";
    if (unit === "share") return sign + Math.abs(100 * v).toFixed(1) + " pts";
    return sign + num(Math.abs(v), unit);
  }

  // ---- charts -----------------------------------------------------------------------------

  function chart(name, width, height, children) {
    return svg(
      "svg",
      {
        class: "chart",
        "data-chart": name,
        viewBox: "0 0 " + width + " " + height,
        width: width,
        height: height,
        role: "img",
      },
      children
    );
  }

  function shareAxis(x0, x1, y0, y1) {
    var out = [];
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      var x = x0 + t * (x1 - x0);
      out.push(svg("line", { class: "axis", x1: x, x2: x, y1: y0, y2: y1 }));
      out.push(
        svg("text", { class: "tick", x: x, y: y1 + 14, "text-anchor": "middle", text: pct(t) })
      );
    });
    return out;
  }

  // Horizontal bars 0–100% with the bootstrap interval as a whisker.
  function dimensionChart(rows) {
    var left = 90, right = 210, width = 600, rowH = 30, top = 8;
    var height = top + rows.length * rowH + 24;
    var plotR = width - right;
    var x = function (v) { return left + v * (plotR - left); };
    var parts = shareAxis(left, plotR, top, top + rows.length * rowH);
    rows.forEach(function (r, i) {
      var y = top + i * rowH;
      var strong = r.name === "composite";
      parts.push(svg("text", { x: left - 8, y: y + 19, "text-anchor": "end",
        "font-weight": strong ? 700 : 400, text: r.name }));
      if (r.value === null) {
        parts.push(svg("text", { x: left + 4, y: y + 19, class: "tick", text: "not run" }));
        return;
      }
      var bar = svg("rect", { class: strong ? "bar strong" : "bar", x: left, y: y + 6,
        width: Math.max(0, x(r.value) - left), height: rowH - 12, rx: 2 },
        [tooltip(r.name + " " + pct(r.value) + " (95% CI " + r.ci_shown + "), " + r.sample)]);
      parts.push(bar);
      if (r.low !== null) {
        var mid = y + rowH / 2;
        parts.push(svg("line", { class: "ci", x1: x(r.low), x2: x(r.high), y1: mid, y2: mid }));
        parts.push(svg("line", { class: "ci", x1: x(r.low), x2: x(r.low), y1: mid - 6, y2: mid + 6 }));
        parts.push(svg("line", { class: "ci", x1: x(r.high), x2: x(r.high), y1: mid - 6, y2: mid + 6 }));
      }
      parts.push(svg("text", { x: plotR + 8, y: y + 19, class: "value-label",
        text: pct(r.value) + "  [" + r.ci_shown + "]" }));
    });
    return chart("dimensions", width, height, parts);
  }

  function heatColour(v) {
    if (v === null || v === undefined) return "#e5e8ee";
    var hue = Math.round(120 * v);
    return "hsl(" + hue + ", 62%, 72%)";
  }

  function heatMap(heat) {
    var left = 170, cellW = 110, cellH = 26, top = 24;
    var width = left + heat.cols.length * cellW + 8;
    var height = top + heat.rows.length * cellH + 6;
    var parts = [];
    heat.cols.forEach(function (c, j) {
      parts.push(svg("text", { class: "cell-text", x: left + j * cellW + cellW / 2, y: 16,
        "font-weight": 600, text: c }));
    });
    heat.rows.forEach(function (r, i) {
      var y = top + i * cellH;
      parts.push(svg("text", { x: left - 8, y: y + 17, "text-anchor": "end",
        "font-weight": r.name === "all" ? 700 : 400, text: r.name }));
      r.cells.forEach(function (cell, j) {
        var x = left + j * cellW;
        parts.push(svg("rect", { class: "cell", x: x + 1, y: y + 1, width: cellW - 2,
          height: cellH - 2, rx: 3, fill: heatColour(cell.value) },
          [tooltip(r.name + " · " + heat.cols[j] + ": pack hit " + pct(cell.value) +
            " of " + cell.n + " probes")]));
        parts.push(svg("text", { class: "cell-text", x: x + cellW / 2, y: y + 17,
          text: cell.n ? pct(cell.value) : "–" }));
      });
    });
    return chart("heatmap", width, height, parts);
  }

  // Box plots on a log axis: timings span microseconds to seconds.
  function latencyChart(rows) {
    var left = 170, right = 30, width = 540, rowH = 26, top = 8;
    var height = top + rows.length * rowH + 30;
    var floor = 0.001;
    var lo = Infinity, hi = 0;
    rows.forEach(function (r) {
      lo = Math.min(lo, Math.max(r.min, floor));
      hi = Math.max(hi, Math.max(r.max, floor));
    });
    var l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
    if (l1 === l0) l1 = l0 + 1;
    var plotR = width - right;
    var x = function (v) {
      return left + (Math.log10(Math.max(v, floor)) - l0) / (l1 - l0) * (plotR - left);
    };
    var parts = [];
    for (var e = l0; e <= l1; e++) {
      var gx = x(Math.pow(10, e));
      parts.push(svg("line", { class: "axis", x1: gx, x2: gx, y1: top, y2: top + rows.length * rowH }));
      parts.push(svg("text", { class: "tick", x: gx, y: top + rows.length * rowH + 14,
        "text-anchor": "middle", text: Math.pow(10, e) + " ms" }));
    }
    rows.forEach(function (r, i) {
      var y = top + i * rowH, mid = y + rowH / 2;
      parts.push(svg("text", { x: left - 8, y: mid + 4, "text-anchor": "end",
        text: r.step + " · " + r.call }));
      parts.push(svg("line", { class: "whisker", x1: x(r.min), x2: x(r.max), y1: mid, y2: mid }));
      parts.push(svg("rect", { class: "box", x: x(r.p25), y: y + 6,
        width: Math.max(1, x(r.p75) - x(r.p25)), height: rowH - 12 },
        [tooltip(r.step + " · " + r.call + ": n=" + r.n + ", p50 " + num(r.p50, "ms") +
          ", p95 " + num(r.p95, "ms") + ", p99 " + num(r.p99, "ms") + ", max " +
          num(r.max, "ms"))]));
      parts.push(svg("line", { class: "median", x1: x(r.p50), x2: x(r.p50), y1: y + 5, y2: y + rowH - 5 }));
      parts.push(svg("line", { class: "p95", x1: x(r.p95), x2: x(r.p95), y1: y + 4, y2: y + rowH - 4 }));
      parts.push(svg("line", { class: "p99", x1: x(r.p99), x2: x(r.p99), y1: y + 4, y2: y + rowH - 4 }));
    });
    parts.push(svg("text", { class: "tick", x: left, y: height - 2,
      text: "box p25–p75 · black p50 · red p95, dashed p99 · line min–max" }));
    return chart("latency", width, height, parts);
  }

  function costChart(rows) {
    var left = 90, right = 150, width = 540, rowH = 26, top = 8;
    var height = top + rows.length * rowH + 24;
    var plotR = width - right;
    var most = 0;
    rows.forEach(function (r) { most = Math.max(most, r.usd_per_correct || 0); });
    var scale = most > 0 ? (plotR - left) / most : 0;
    var parts = [svg("line", { class: "axis", x1: left, x2: left, y1: top,
      y2: top + rows.length * rowH })];
    rows.forEach(function (r, i) {
      var y = top + i * rowH;
      parts.push(svg("text", { x: left - 8, y: y + 17, "text-anchor": "end",
        "font-weight": r.group === "all" ? 700 : 400, text: r.group }));
      var total = r.engine_usd + r.answerer_usd;
      var per = r.usd_per_correct || 0;
      var engineW = total > 0 ? per * (r.engine_usd / total) * scale : 0;
      var answerW = total > 0 ? per * (r.answerer_usd / total) * scale : 0;
      var label = r.shown;
      parts.push(svg("rect", { class: "bar strong", x: left, y: y + 5, width: engineW,
        height: rowH - 10 }, [tooltip(r.group + ": engine $" + r.engine_usd.toFixed(4) +
          ", answering model $" + r.answerer_usd.toFixed(4) + ", " + r.correct + " correct")]));
      parts.push(svg("rect", { class: "bar answerer", x: left + engineW, y: y + 5,
        width: answerW, height: rowH - 10 }));
      parts.push(svg("text", { x: left + engineW + answerW + 6, y: y + 17, text: label }));
    });
    var legend = most > 0 ? "blue engine · orange answering model, per correct answer"
      : "no spend to draw: each cost is $0 or, shown as –, unmeasured";
    parts.push(svg("text", { class: "tick", x: left, y: height - 4, text: legend }));
    return chart("cost", width, height, parts);
  }

  // Deltas with their 95% intervals, one row per share metric, coloured by verdict.
  function forestChart(moves) {
    var left = 170, right = 120, width = 680, rowH = 22, top = 8;
    var height = top + moves.length * rowH + 24;
    var plotR = width - right;
    var span = 0.05;
    moves.forEach(function (m) {
      [m.delta, m.low, m.high].forEach(function (v) {
        if (v !== null) span = Math.max(span, Math.abs(v));
      });
    });
    var x = function (v) { return left + (v + span) / (2 * span) * (plotR - left); };
    var parts = [svg("line", { class: "zero", x1: x(0), x2: x(0), y1: top,
      y2: top + moves.length * rowH })];
    [-span, 0, span].forEach(function (t) {
      parts.push(svg("text", { class: "tick", x: x(t), y: top + moves.length * rowH + 14,
        "text-anchor": "middle", text: delta(t, "share") }));
    });
    moves.forEach(function (m, i) {
      var y = top + i * rowH + rowH / 2;
      var kind = m.verdict === "better" ? "better" : m.verdict === "worse" ? "worse" : "noise";
      parts.push(svg("text", { x: left - 8, y: y + 4, "text-anchor": "end", text: m.name }));
      if (m.delta === null) return;
      if (m.low !== null) {
        parts.push(svg("line", { class: kind, "stroke-width": 2, x1: x(m.low), x2: x(m.high),
          y1: y, y2: y }));
      }
      parts.push(svg("circle", { class: "point " + kind, cx: x(m.delta), cy: y, r: 4 },
        [tooltip(m.name + ": " + delta(m.delta, "share") + " (" + m.verdict + ")")]));
      parts.push(svg("text", { x: plotR + 8, y: y + 4, text: delta(m.delta, "share") + " " +
        (m.verdict === "within noise" ? "" : m.verdict) }));
    });
    return chart("forest", width, height, parts);
  }

  // ---- tables -----------------------------------------------------------------------------

  function dataTable(header, rows, numeric) {
    var head = el("tr", {}, header.map(function (h, i) {
      return el("th", { class: numeric && numeric[i] ? "num" : null, text: h });
    }));
    var body = rows.map(function (r) {
      var tr = el("tr", { class: r.className || null }, r.cells.map(function (c, i) {
        return el("td", { class: numeric && numeric[i] ? "num" : null, text: c });
      }));
      return tr;
    });
    return el("table", { class: "data" }, [el("thead", {}, [head]), el("tbody", {}, body)]);
  }

  function verdictCell(text, verdict) {
    var cls = verdict === "better" ? "verdict-better" : verdict === "worse" ? "verdict-worse"
      : "verdict-noise";
    return el("span", { class: cls, text: text });
  }

  // The probes and checks: a search box and a filter; a click opens the pack. Only a view
  // of VIEW rows is in the document at a time, built when first shown, so a page holding
  // thousands of items opens as fast as one holding a hundred; search and filter still see
  // every item. Each item's search text is built on the first search, not on load.
  var VIEW = 100;

  function itemTable(items, failuresFirst) {
    var search = el("input", { type: "search", placeholder: "Search cases, questions, packs…",
      "aria-label": "search" });
    var filter = el("select", { "aria-label": "filter" }, [
      el("option", { value: "all", text: "everything" }),
      el("option", { value: "miss", text: "misses only" }),
      el("option", { value: "probe", text: "probes" }),
      el("option", { value: "check", text: "checks" }),
    ]);
    var count = el("span", { class: "count" });
    var prev = el("button", { type: "button", class: "prev", text: "‹ previous" });
    var next = el("button", { type: "button", class: "next", text: "next ›" });
    var tbody = el("tbody");
    var links = items.some(function (item) { return item.href; });
    var header = el("tr", {}, ["", "type", "case", "trial", "item", "phase", "status", "ok",
      "question / query"].concat(links ? ["page"] : []).map(function (h) {
      return el("th", { text: h });
    }));
    var entries = items.map(function (item, index) {
      return { item: item, index: index, tr: null, detail: null, haystack: null };
    });
    if (failuresFirst) {
      entries = entries.filter(function (e) { return !e.item.ok; })
        .concat(entries.filter(function (e) { return e.item.ok; }));
    }
    var matched = entries, start = 0, only = null;
    var whole = el("button", { type: "button", class: "whole", hidden: true });

    function row(entry) {
      if (entry.tr) return entry.tr;
      var item = entry.item;
      var mark = el("span", { class: item.ok ? "ok" : "fail", text: item.ok ? "✓" : "✗" });
      var cells = [
        el("td", { class: "toggle", text: "▸" }),
        el("td", { text: item.type }),
        el("td", { text: item.case }),
        el("td", { class: "num", text: item.trial }),
        el("td", { text: item.item }),
        el("td", { text: item.phase }),
        el("td", { text: item.status }),
        el("td", {}, [mark]),
        el("td", { text: item.text }),
      ];
      if (links) {
        var opened = item.href + "#case=" + encodeURIComponent(item.case) + "&open";
        cells.push(el("td", {}, [el("a", { href: opened, class: "page-link",
          text: item.href.split("/").pop() })]));
      }
      entry.tr = el("tr", { class: "item", "data-index": entry.index }, cells);
      entry.tr.addEventListener("click", function (event) {
        if (event.target.tagName !== "A") toggle(entry);
      });
      return entry.tr;
    }

    function haystack(entry) {
      if (entry.haystack === null) {
        var it = entry.item;
        entry.haystack = [it.type, it.case, it.item, it.phase, it.status, it.text, it.pack]
          .concat(it.facts.map(function (f) { return f[1]; })).join("\n").toLowerCase();
      }
      return entry.haystack;
    }

    function toggle(entry) {
      if (entry.detail) {
        entry.detail.remove();
        entry.detail = null;
        entry.tr.firstChild.textContent = "▸";
        return;
      }
      var facts = el("dl", {}, [].concat.apply([], entry.item.facts.map(function (f) {
        return [el("dt", { text: f[0] }), el("dd", { text: f[1] })];
      })));
      var label = entry.item.type === "check" ? "hits returned" : "pack";
      var pack = entry.item.pack ? el("pre", { class: "pack", text: entry.item.pack })
        : el("p", { class: "note", text: "no " + label });
      entry.detail = el("tr", { class: "detail" }, [
        el("td", {}), el("td", { colspan: links ? 9 : 8 }, [facts, el("strong", { text: label }),
          pack]),
      ]);
      entry.tr.after(entry.detail);
      entry.tr.firstChild.textContent = "▾";
    }

    function draw() {
      tbody.textContent = "";
      var shown = matched.slice(start, start + VIEW);
      shown.forEach(function (entry) {
        tbody.appendChild(row(entry));
        if (entry.detail) tbody.appendChild(entry.detail);
      });
      var range = shown.length ? (start + 1) + "–" + (start + shown.length) : "0";
      count.textContent = range + " of " + matched.length + " shown" +
        (matched.length === entries.length ? "" : " (" + entries.length + " in all)");
      prev.disabled = start === 0;
      next.disabled = start + VIEW >= matched.length;
    }

    function apply() {
      var q = search.value.trim().toLowerCase();
      var mode = filter.value;
      matched = entries.filter(function (entry) {
        var it = entry.item;
        return (mode === "all" || (mode === "miss" && !it.ok) || mode === it.type) &&
          (only === null || it.case === only) && (!q || haystack(entry).indexOf(q) !== -1);
      });
      start = 0;
      whole.hidden = only === null;
      whole.textContent = "case " + only + " only: show all";
      draw();
    }

    search.addEventListener("input", apply);
    filter.addEventListener("change", apply);
    prev.addEventListener("click", function () { start = Math.max(0, start - VIEW); draw(); });
    next.addEventListener("click", function () { start += VIEW; draw(); });
    whole.addEventListener("click", function () { only = null; apply(); });
    // A link can carry a search, e.g. report.html#q=stale&open, or name one case
    // (#case=NAME&open, as the summary's failures link their page), and open what it finds.
    var link = new URLSearchParams(location.hash.slice(1));
    search.value = link.get("q") || "";
    only = link.get("case");
    if (link.get("filter")) filter.value = link.get("filter");
    apply();
    if (link.has("open")) {
      matched.slice(0, Math.min(50, VIEW)).forEach(toggle);
    }
    var table = el("table", { class: "data", id: "items" }, [el("thead", {}, [header]), tbody]);
    return [el("div", { class: "controls" }, [search, filter, whole, prev, count, next]),
      el("div", { class: "scroll" }, [table])];
  }

  // The case pages of a large run: one line each, with how many of its items fail.
  function pageIndex(index) {
    return el("table", { class: "data", id: "pages" }, [
      el("thead", {}, [el("tr", {}, ["page", "cases", "from", "to", "probes and checks",
        "failing"].map(function (h) { return el("th", { text: h }); }))]),
      el("tbody", {}, index.map(function (p) {
        return el("tr", {}, [
          el("td", {}, [el("a", { href: p.href, class: "page-link",
            text: p.href.split("/").pop() })]),
          el("td", { class: "num", text: p.cases }),
          el("td", { text: p.first }),
          el("td", { text: p.last }),
          el("td", { class: "num", text: p.items }),
          el("td", { class: "num", text: p.failing }),
        ]);
      })),
    ]);
  }

  // ---- pages ------------------------------------------------------------------------------

  // The scenario tables of a run with many scenarios show those missing most.
  function cut(d) {
    var rows = d.heat.rows.length - 1;
    return rows < d.scenarios ? "The " + rows + " of " + d.scenarios + " scenarios missing " +
      "the most probes, and all of them pooled." : null;
  }

  function runPage(d) {
    var tiles = d.headline.map(function (h) {
      var sub = "95% CI " + h.ci_shown + " · " + h.sample;
      if (h.spread) sub += " · ±" + (100 * h.spread.sd).toFixed(1) + " pts across trials";
      return el("div", { class: "tile" }, [
        el("div", { class: "label", text: h.title }),
        el("div", { class: "value", text: pct(h.value) }),
        el("div", { class: "sub", text: sub }),
      ]);
    });
    var parts = [];
    if (tiles.length) parts.push(section("Headline", [el("div", { class: "tiles" }, tiles)],
      "Intervals: bootstrap over cases, " + d.resamples + " resamples, seeded."));
    var charts = [];
    if (d.dimensions.length) {
      charts.push(section("Dimensions", [dimensionChart(d.dimensions)],
        "Bars: score. Whiskers: 95% bootstrap interval over fixtures."));
    }
    if (d.heat.rows.length) {
      charts.push(section("Pack hit by scenario and phase", [heatMap(d.heat)], cut(d)));
    }
    if (d.latency.length) charts.push(section("Latency per step", [latencyChart(d.latency)]));
    charts.push(section("Cost per correct answer", [costChart(d.cost)]));
    if (d.index) {
      var more = d.failures > d.items.length
        ? "The first " + d.items.length + " of " + d.failures + " failing probes and checks; "
        : "All " + d.failures + " failing probes and checks; ";
      parts.push(section("Failures", itemTable(d.items), more + "every case is on the case " +
        "pages below (choose “misses only” there). Click a row to open its pack."));
    }
    if (d.index) {
      parts.push(section("Case pages", [el("div", { class: "scroll" }, [pageIndex(d.index)])],
        d.index.length + " pages hold every probe and check, in case order, beside this file."));
    }
    parts.push(el("div", { class: "grid2" }, charts));
    if (!d.index) {
      parts.push(section("Probes and checks", itemTable(d.items, true),
        "Failures first. Click a row to open its pack (or, for a check, the hits the engine " +
        "returned)."));
    }
    if (d.accuracy.length) {
      parts.push(section("Accuracy by scenario and phase", [dataTable(
        ["scenario", "phase", "probes", "pack hit", "extractive", "model", "captured", "MRR",
          "fresh first", "leaks"],
        d.accuracy.map(function (r) {
          return { className: r.name === "all" ? "all" : null, cells: [r.name, r.phase,
            String(r.probes), pct(r.pack_hit), pct(r.extractive), pct(r.model), pct(r.captured),
            num(r.mrr, "score"), pct(r.fresh_first),
            r.leak_checks ? r.leaks + "/" + r.leak_checks : "–"] };
        }),
        [false, false, true, true, true, true, true, true, true, true])], cut(d)));
    }
    if (d.tags && d.tags.length) {
      parts.push(section("Scores by probe tag", [dataTable(
        ["tag", "probes", "pack hit", "extractive", "MRR", "F1", "evidence"],
        d.tags.map(function (r) {
          return { cells: [r.name, String(r.probes), pct(r.pack_hit), pct(r.extractive),
            num(r.mrr, "score"), num(r.f1, "score"), pct(r.evidence)] };
        }),
        [false, true, true, true, true, true, true])]));
    }
    parts.push(section("KPIs", [dataTable(
      ["group", "kpi", "value", "95% CI", "better", "n"],
      d.kpis.map(function (k) {
        return { cells: [k.group, k.name, k.shown, k.ci_shown, k.better, String(k.n)] };
      }),
      [false, false, true, true, false, true])]));
    append(app, parts);
  }

  function comparePage(d) {
    var parts = [section("Verdicts", [el("ul", { class: "verdicts" }, d.comparisons.map(
      function (c) {
        var kind = c.verdict === "clear regression" ? "worse"
          : c.verdict === "clear improvement" ? "better" : "noise";
        return el("li", {}, [verdictCell(c.headline, kind)]);
      }))], d.rule)];
    parts.push(section("Groups", [dataTable(["group", "runs", "results", "outside common subset"],
      d.groups.map(function (g) {
        return { cells: [g.name, String(g.runs.length), String(g.results), String(g.outside)] };
      }), [false, true, true, true])]));
    d.comparisons.forEach(function (c) {
      var shares = c.moves.filter(function (m) { return m.unit === "share" && m.delta !== null; });
      var table = el("table", { class: "data" }, [
        el("thead", {}, [el("tr", {}, ["group", "metric", c.baseline, c.candidate, "Δ",
          "95% CI of Δ", "verdict"].map(function (h) { return el("th", { text: h }); }))]),
        el("tbody", {}, c.rows.map(function (r) {
          return el("tr", {}, r.cells.map(function (cell, i) {
            if (i === r.cells.length - 1) return el("td", {}, [verdictCell(cell, r.verdict)]);
            return el("td", i > 1 ? { class: "num", text: cell } : { text: cell });
          }));
        })),
      ]);
      var flips = dataTable(["scope", "units", "lost", "gained", "p (McNemar)", "verdict"],
        c.flips.map(function (f) {
          return { cells: [f.scope, String(f.units), String(f.lost), String(f.gained),
            f.p.toPrecision(3), f.verdict] };
        }), [false, true, true, true, true, false]);
      parts.push(section(c.candidate + " vs " + c.baseline, [
        forestChart(shares), el("div", { class: "scroll" }, [table]),
        el("h3", { text: "Probes and checks, paired" }), flips,
      ]));
    });
    append(app, parts);
  }

  // One page of a large run's probes and checks, linked to its neighbours and the summary.
  function casesPage(d) {
    var nav = el("nav", { class: "pages" }, [
      el("a", { href: d.summary, class: "summary", text: "↑ summary" }),
      d.prev ? el("a", { href: d.prev, class: "prev", text: "‹ page " + (d.page - 1) }) : null,
      el("span", { text: "page " + d.page + " of " + d.pages }),
      d.next ? el("a", { href: d.next, class: "next", text: "page " + (d.page + 1) + " ›" })
        : null,
    ]);
    append(app, [nav, section("Probes and checks", itemTable(d.items),
      "Click a row to open its pack (or, for a check, the hits the engine returned).")]);
  }

  if (data.kind === "compare") comparePage(data);
  else if (data.kind === "cases") casesPage(data);
  else runPage(data);
  document.body.setAttribute("data-rendered", "true");
  // Milliseconds from the start of navigation to the page drawn: what benchmarks/report_speed
  // reads to time a report's opening.
  document.body.setAttribute("data-rendered-ms", String(Math.round(performance.now())));
})();
