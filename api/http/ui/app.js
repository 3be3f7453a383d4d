// assocmem's web page: read-only views over the HTTP API, with the key the person gives.
// No framework and no library: DOM built node by node (a memory's text is never parsed
// as HTML), SVG drawn here. Every view has its own address under /ui.
"use strict";

const KEY = "assocmem.key";
const SVG = "http://www.w3.org/2000/svg";
const view = () => document.getElementById("view");

// ---- the key: from the address's fragment (`assocmem ui`), kept for this tab only ----

function takeKeyFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.has("key")) {
    sessionStorage.setItem(KEY, fragment.get("key"));
    history.replaceState(null, "", location.pathname + location.search);
  }
}

const key = () => sessionStorage.getItem(KEY);

class Refused extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${key()}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const answer = await response.json().catch(() => ({}));
  if (response.status === 401) {
    sessionStorage.removeItem(KEY);
    throw new Refused(401, answer.detail || "the key is refused");
  }
  if (!response.ok) throw new Refused(response.status, answer.detail || response.statusText);
  return answer;
}

// ---- building the page ----

function h(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function s(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function show(title, ...children) {
  document.title = `${title} · assocmem`;
  const main = view();
  main.replaceChildren(h("h1", {}, title), ...children);
}

const enc = encodeURIComponent;
const conceptHref = (c, hops) => `/ui/concepts/${enc(c)}${hops ? `?hops=${hops}` : ""}`;
const linkHref = (a, b) => `/ui/links/${enc(a)}/${enc(b)}`;
const memoryHref = (id) => `/ui/memories/${enc(id)}`;

const when = new Intl.DateTimeFormat("en-GB", {
  day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit",
  second: "2-digit",
});
const shortWhen = new Intl.DateTimeFormat("en-GB", {
  day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
});
const dayOnly = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric" });
const timeOnly = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const at = (ts) => (ts ? when.format(new Date(ts * 1000)) : "");
const num = (x, digits = 3) => (typeof x === "number" ? +x.toFixed(digits) : x);

const chip = (concept, hops) => h("a", { class: "concept", href: conceptHref(concept, hops) }, concept);

function facts(pairs) {
  return h("dl", { class: "facts" },
    pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
      .flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function table(headings, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h("div", { class: "scroll" }, h("table", {},
    h("thead", {}, h("tr", {}, headings.map(([text, cls]) => h("th", { class: cls }, text)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c, n) =>
      h("td", { class: headings[n][1] }, c)))))));
}

function failure(error) {
  if (error instanceof Refused && error.status === 401) return login(error.message);
  const main = view();
  main.append(h("p", { class: "error", role: "alert" }, error.message));
}

// ---- login ----

function login(message) {
  document.querySelector("nav").hidden = true;
  const input = h("input", {
    id: "key", type: "password", name: "key", autocomplete: "off", required: true,
    placeholder: "amk_…", "aria-describedby": "key-help",
  });
  const said = h("p", { class: "error", role: "alert", id: "login-error" }, message || "");
  const form = h("form", { class: "card login", onsubmit: async (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, input.value.trim());
    try {
      await api("GET", "/v1/health");
      render();
    } catch (error) {
      sessionStorage.removeItem(KEY);
      said.textContent = `This key is refused: ${error.message}`;
      input.focus();
    }
  } },
  h("label", { for: "key" }, "API key"),
  input,
  h("p", { class: "muted", id: "key-help" },
    "The key stays in this tab only, and goes with each request as the other clients send it. ",
    "`assocmem ui` opens this page already logged in."),
  h("button", { type: "submit" }, "Log in"),
  said);
  show("Log in", form);
  input.focus();
}

// ---- search ----

const DEPTHS = ["fast", "standard", "deep"];

function field(label, name, value, extra) {
  return h("label", { class: extra?.wide ? "wide" : undefined }, label,
    h("input", { name, value: value || "", ...(extra?.input || {}) }));
}

async function search(params) {
  const q = params.get("q") || "";
  const concepts = params.get("concepts") || "";
  const depth = DEPTHS.includes(params.get("depth")) ? params.get("depth") : "standard";
  const time = params.get("time") || "";
  const asOf = params.get("as_of") || "";
  const form = h("form", { class: "query card", role: "search", action: "/ui/search", onsubmit: submitTo("/ui/search") },
    field("Question", "q", q, { wide: true, input: { type: "search", placeholder: "what failed after the deploy?" } }),
    field("Concepts (comma separated)", "concepts", concepts),
    h("label", {}, "Depth", h("select", { name: "depth" },
      DEPTHS.map((d) => h("option", { value: d, selected: d === depth }, d)))),
    field("Time", "time", time, { input: { placeholder: "last week, since March" } }),
    field("As of", "as_of", asOf, { input: { placeholder: "position or ISO time" } }),
    h("button", { type: "submit" }, "Search"));
  show("Search", form);
  if (!q && !concepts) {
    view().append(h("p", { class: "muted" }, "Ask a question, or name concepts: the answer shows each item's score, its source, and the links that brought it."));
    return;
  }
  const body = { depth, limit: 20, record_access: false };
  if (q) body.text = q;
  if (concepts) body.concepts = concepts.split(",").map((c) => c.trim()).filter(Boolean);
  if (time) body.time = time;
  if (asOf) body.as_of = asOf;
  const answer = await api("POST", "/v1/read", body);
  const expanded = answer.expanded_concepts || [];
  view().append(
    h("p", { class: "meta" },
      `${answer.items.length} items at ${answer.position}, ${answer.depth}. Query: `,
      (answer.query_concepts || []).map((c) => [chip(c.concept), " "]),
      expanded.length ? ["expanded: ", expanded.map((c) => [chip(c.concept), ` ${num(c.strength, 2)} `])] : ""),
    answer.items.length
      ? h("ol", { class: "items" }, answer.items.map(item))
      : h("p", { class: "muted" }, "Nothing found."));
}

function item(found) {
  return h("li", { class: "card item" },
    h("div", {},
      h("div", { class: "score" }, num(found.score)),
      h("span", { class: `source ${found.source}` }, found.source)),
    h("div", {},
      h("a", { class: "text", href: memoryHref(found.id) }, found.text),
      h("div", { class: "meta" }, `${found.agent} · ${at(found.ts)} · `, found.concepts.map((c) => [chip(c), " "])),
      via(found)));
}

function via(found) {
  const steps = found.via || [];
  const beside = found.beside;
  const chains = steps.map((step) => h("div", { class: "chain", "aria-label": `via ${step.from} to ${step.concept}` },
    h("span", { class: "meta" }, "via"),
    chip(step.from),
    h("a", { class: `arrow${step.learned ? " taught" : ""}`, href: linkHref(step.from, step.concept),
      title: `written ${step.count}, taught ${num(step.learned)}, PPMI ${num(step.ppmi, 2)}` },
    `—${num(step.weight, 2)}→`),
    chip(step.concept),
    h("span", { class: "meta" }, `written ${step.count}, taught ${num(step.learned)}, PPMI ${num(step.ppmi, 2)}`)));
  if (beside) {
    chains.push(h("div", { class: "chain" }, h("span", { class: "meta" }, `written ${beside.written || "beside"}`),
      h("a", { href: memoryHref(beside.id) }, beside.id),
      beside.taught ? h("span", { class: "arrow taught" }, `taught ${num(beside.taught)}`) : ""));
  }
  return chains;
}

function submitTo(path) {
  return (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(event.target)) if (String(value).trim()) params.set(name, String(value).trim());
    go(`${path}?${params}`);
  };
}

// ---- a memory ----

async function memory(id) {
  const [found, audit] = await Promise.all([
    api("GET", `/v1/memories/${enc(id)}`),
    api("GET", `/v1/audit/memory/${enc(id)}`),
  ]);
  const metadata = Object.entries(found.metadata || {}).map(([k, v]) => `${k}=${v}`).join(", ");
  show(found.text.length > 80 ? `${found.text.slice(0, 80)}…` : found.text,
    h("div", { class: "card" },
      h("p", { class: "text" }, found.text),
      h("p", {}, found.concepts.map((c) => [chip(c), " "])),
      facts([
        ["id", found.id], ["kind", found.kind], ["written", at(found.ts)], ["agent", found.agent],
        ["user", found.user], ["session", found.session], ["namespace", found.namespace],
        ["importance", found.importance], ["valence", num(found.valence)], ["accesses", found.accesses],
        ["metadata", metadata], ["expires", found.expires_at ? at(found.expires_at) : ""],
        ["superseded by", found.superseded_by ? h("a", { href: memoryHref(found.superseded_by) }, found.superseded_by) : ""],
      ])),
    h("h2", {}, "Events that touched it"),
    table([["When"], ["Event"], ["Agent", "hide-narrow"], ["What"], ["Then"]],
      audit.events.map((e) => [
        at(e.ts), e.type, e.agent, eventDetail(e),
        h("a", { href: `/ui/search?${new URLSearchParams({ concepts: found.concepts.slice(0, 8).join(","), as_of: e.position })}`,
          title: "what a read of its concepts gave right after this event" }, e.position),
      ]), "No event touched it."));
}

function eventDetail(e) {
  const d = e.detail || {};
  if (e.type === "feedback.given") {
    const taught = (d.links || []).map((l) => h("span", {}, " · taught from ", h("a", { href: memoryHref(l.from) }, l.from), ` ${num(l.taught)}`));
    return [`outcome ${num(d.outcome)} for `, (d.concepts || []).map((c) => [chip(c), " "]), taught];
  }
  if (e.type === "links.consolidated" && !d.superseded_by) {
    const faded = (d.links || []).map((l) => h("span", {}, " · faded from ", h("a", { href: memoryHref(l.from) }, l.from), ` to ${num(l.taught)}`));
    return ["consolidation", faded];
  }
  if (e.type === "memory.superseded" || d.supersedes || d.superseded_by) {
    const other = d.superseded_by || d.by || (d.supersedes || [])[0];
    return other ? ["by ", h("a", { href: memoryHref(other) }, other)] : JSON.stringify(d);
  }
  if (e.type === "memory.written") return `written with ${(d.concepts || []).join(", ")}`;
  if (e.type === "memory.accessed") return `read ${d.hits ?? d.count ?? 1} times`;
  return Object.keys(d).length ? JSON.stringify(d) : "";
}

// ---- a link: its weight over time ----

async function link(a, b) {
  const history = await api("GET", `/v1/audit/link?${new URLSearchParams({ source: a, target: b })}`);
  const changes = history.changes;
  show(`${history.source} — ${history.target}`,
    h("p", {}, chip(history.source), " ", chip(history.target)),
    facts([
      ["weight now", num(history.weight)], ["written", history.count], ["taught", num(history.learned)],
      ["written share", `${Math.round(history.written_share * 100)}%`], ["changes", changes.length],
    ]),
    h("h2", {}, "Weight over time"),
    h("div", { class: "legend" }, h("span", { class: "l-weight" }, "weight"),
      h("span", { class: "l-written" }, "written (count)"), h("span", { class: "l-taught" }, "taught (feedback)"),
      h("span", { class: "l-ppmi" }, "PPMI (right scale; at kept snapshots)")),
    h("div", { id: "link-chart" }, chart(changes, null)),
    h("h2", {}, "Every step"),
    table([["When"], ["Event"], ["Agent", "hide-narrow"], ["Written", "n"], ["Taught", "n"], ["Weight after", "n"]],
      changes.map((c, n) => [
        h("a", { href: stepHref(c, changes[n - 1]) }, at(c.ts)),
        h("a", { href: stepHref(c, changes[n - 1]) }, c.type), c.agent,
        c.written ? `+${c.written}` : "", c.taught ? `${c.taught > 0 ? "+" : ""}${num(c.taught)}` : "",
        num(c.weight),
      ]), "No event ever changed this link."));
  // PPMI loads whole states kept along the log: drawn once it comes, the rest is shown
  api("GET", `/v1/audit/link/ppmi?${new URLSearchParams({ source: a, target: b })}`)
    .then((found) => document.getElementById("link-chart")?.replaceChildren(chart(changes, found.samples)))
    .catch(() => {});
}

function stepHref(change, before) {
  if (change.type === "memory.written") return memoryHref(change.position);
  const from = before ? before.position : "0-0";
  return `/ui/diff?${new URLSearchParams({ from, to: change.position })}`;
}

function chart(changes, ppmi) {
  if (!changes.length) return h("p", { class: "muted" }, "Nothing to draw.");
  const W = drawingWidth(), H = W < 500 ? 240 : 300, L = 40, R = 40, T = 14, B = 44;
  const times = [...changes.map((c) => c.ts), ...(ppmi || []).map((p) => p.ts)];
  let t0 = Math.min(...times), t1 = Math.max(...times);
  if (t1 - t0 < 60) { t0 -= 30; t1 += 30; }
  const values = changes.flatMap((c) => [c.weight, c.count, c.learned]);
  const low = Math.min(0, ...values), high = Math.max(1, ...values) * 1.1;
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - (v - low) / (high - low)) * (H - T - B);
  const step = (get) => {
    let d = `M${x(t0)},${y(0)}`;
    for (const c of changes) d += `H${x(c.ts)}V${y(get(c))}`;
    return d + `H${x(t1)}`;
  };
  const yTicks = niceTicks(low, high, 5);
  const ppmiHigh = Math.max(1, ...(ppmi || []).map((p) => p.ppmi)) * 1.1;
  const py = (v) => T + (1 - v / ppmiHigh) * (H - T - B);
  const spaces = W < 500 ? 2 : 4;
  const xTicks = Array.from({ length: spaces + 1 }, (_, n) => t0 + ((t1 - t0) * n) / spaces);
  const spansDays = t1 - t0 > 86400;
  const label = (t, n) => {
    const d = new Date(t * 1000);
    if (spansDays) return dayOnly.format(d);
    return n === 0 ? shortWhen.format(d) : timeOnly.format(d);
  };
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-title", class: "link-chart" },
    s("title", { id: "chart-title" }, `Weight of the link over time: ${changes.length} steps, from ${at(changes[0].ts)} to ${at(changes[changes.length - 1].ts)}`),
    yTicks.map((v) => [s("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }),
      s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, String(+v.toFixed(2)))]),
    s("line", { class: "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }),
    xTicks.map((t, n) => s("text", { x: x(t), y: H - B + 18, "text-anchor": n === 0 ? "start" : n === spaces ? "end" : "middle", class: "tick" }, label(t, n))),
    s("path", { class: "weight", d: step((c) => c.weight) }),
    s("path", { class: "written", d: step((c) => c.count) }),
    s("path", { class: "taught", d: step((c) => c.learned) }),
    ppmi ? [
      niceTicks(0, ppmiHigh, 4).map((v) => s("text", { x: W - R + 6, y: py(v) + 4, class: "ppmi-tick" }, String(+v.toFixed(2)))),
      s("polyline", { class: "ppmi", points: ppmi.map((p) => `${x(p.ts)},${py(p.ppmi)}`).join(" ") }),
      ppmi.map((p) => s("circle", { class: "ppmi", cx: x(p.ts), cy: py(p.ppmi), r: 3.5 },
        s("title", {}, `PPMI ${num(p.ppmi, 2)} at ${at(p.ts)} (${p.position})`))),
    ] : [],
    changes.map((c, n) => s("a", { href: stepHref(c, changes[n - 1]) },
      s("circle", { cx: x(c.ts), cy: y(c.weight), r: 5, fill: c.taught ? "var(--taught)" : "var(--ink)" },
        s("title", {}, `${at(c.ts)}: ${c.type} by ${c.agent}, weight ${num(c.weight)}`)))));
  return h("div", { class: "card" }, svg);
}

function drawingWidth() {
  // drawn at the width it is shown at, so that its text stays the size of the page's
  return Math.max(340, Math.min(800, view().clientWidth - 32));
}

function niceTicks(low, high, count) {
  const span = high - low || 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const unit = [1, 2, 5, 10].map((m) => m * magnitude).find((m) => m >= raw) || raw;
  const ticks = [];
  for (let v = Math.ceil(low / unit) * unit; v <= high + 1e-9; v += unit) ticks.push(v);
  return ticks;
}

// ---- a neighbourhood ----

async function concept(name, params) {
  const hops = ["1", "2", "3"].includes(params.get("hops")) ? +params.get("hops") : 1;
  const form = h("form", { class: "query card", onsubmit: (event) => {
    event.preventDefault();
    const data = new FormData(event.target);
    const c = String(data.get("concept") || "").trim();
    if (c) go(conceptHref(c, data.get("hops")));
  } },
  field("Concept", "concept", name, { input: { required: true } }),
  h("label", {}, "Hops", h("select", { name: "hops" }, [1, 2, 3].map((n) => h("option", { value: n, selected: n === hops }, n)))),
  h("button", { type: "submit" }, "Show"));
  show(name ? `Around ${name}` : "Concepts", form);
  if (!name) return;
  const graph = await api("GET", `/v1/graph?${new URLSearchParams({ concepts: name, hops })}`);
  const edges = graph.edges;
  if ((graph.unknown_concepts || []).length) {
    view().append(h("p", { class: "muted" }, `No event named ${name}: no link around it.`));
    return;
  }
  view().append(
    h("div", { class: "legend" }, h("span", { class: "l-written" }, "written link (width: weight)"), h("span", { class: "l-taught" }, "taught by feedback")),
    neighbourhood(graph.concepts[0] || name, edges, hops),
    h("h2", {}, `${edges.length} links`),
    table([["Link"], ["Weight", "n"], ["Written", "n"], ["Taught", "n"], ["Changed at", "hide-narrow"]],
      edges.map((e) => [
        [chip(e.source, hops), " ", h("a", { class: `arrow${e.learned ? " taught" : ""}`, href: linkHref(e.source, e.target) }, "—"), " ", chip(e.target, hops)],
        num(e.weight), e.count, num(e.learned), e.changed_at,
      ]), "No link around it yet."));
}

function neighbourhood(centre, edges, hops) {
  const W = drawingWidth(), H = Math.round(W * 0.68), cx = W / 2, cy = H / 2;
  const distance = new Map([[centre, 0]]);
  const parent = new Map();
  let frontier = [centre];
  for (let hop = 1; hop <= hops; hop++) {
    const next = [];
    for (const e of edges) {
      for (const [a, b] of [[e.source, e.target], [e.target, e.source]]) {
        if (frontier.includes(a) && !distance.has(b)) { distance.set(b, hop); parent.set(b, a); next.push(b); }
      }
    }
    frontier = next;
  }
  const MOST = 18;
  const angle = new Map([[centre, 0]]);
  const position = new Map([[centre, [cx, cy]]]);
  let hidden = 0;
  for (let hop = 1; hop <= hops; hop++) {
    let ring = [...distance].filter(([, d]) => d === hop).map(([c]) => c);
    const strength = (c) => Math.max(...edges.filter((e) => e.source === c || e.target === c).map((e) => e.weight));
    ring.sort((p, q) => strength(q) - strength(p));
    hidden += Math.max(0, ring.length - MOST);
    ring = ring.slice(0, MOST);
    ring.sort((p, q) => (angle.get(parent.get(p)) ?? 0) - (angle.get(parent.get(q)) ?? 0));
    const radius = (Math.min(W, H) / 2 - 40) * (hop / hops);
    ring.forEach((c, n) => {
      const a = (2 * Math.PI * n) / ring.length + hop * 0.35;
      angle.set(c, a);
      position.set(c, [cx + radius * Math.cos(a) * (W / H) * 0.9, cy + radius * Math.sin(a)]);
    });
  }
  const heaviest = Math.max(1, ...edges.map((e) => Math.abs(e.weight)));
  const shown = edges.filter((e) => position.has(e.source) && position.has(e.target));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "graph-title", class: "graph" },
    s("title", { id: "graph-title" }, `Links around ${centre}, ${hops} hop${hops > 1 ? "s" : ""}: ${position.size} concepts`),
    shown.map((e) => {
      const [x1, y1] = position.get(e.source), [x2, y2] = position.get(e.target);
      return s("a", { href: linkHref(e.source, e.target) },
        s("line", { class: `edge${e.learned ? " taught" : ""}`, x1, y1, x2, y2, "stroke-width": 1 + (4 * Math.abs(e.weight)) / heaviest },
          s("title", {}, `${e.source} — ${e.target}: weight ${num(e.weight)} (written ${e.count}, taught ${num(e.learned)})`)));
    }),
    [...position].map(([c, [x, y]]) => s("a", { href: conceptHref(c, hops), "aria-label": `concept ${c}` },
      s("circle", { class: `node${c === centre ? " centre" : ""}`, cx: x, cy: y, r: c === centre ? 10 : 7 }),
      s("text", { x: x + 11, y: y + 4 }, c))));
  return h("div", { class: "card" }, svg, hidden ? h("p", { class: "meta" }, `${hidden} weaker concepts left out of the drawing; the table lists every link.`) : "");
}

// ---- two moments ----

async function diff(params) {
  const from = params.get("from") || "", to = params.get("to") || "";
  const form = h("form", { class: "query card", onsubmit: submitTo("/ui/diff") },
    field("From", "from", from, { input: { required: true, placeholder: "yesterday, 2026-12-01, or a position" } }),
    field("To", "to", to, { input: { required: true, placeholder: "now, or a position" } }),
    h("button", { type: "submit" }, "Compare"));
  show("Two moments", form);
  if (!from || !to) {
    view().append(h("p", { class: "muted" }, "Links gained, lost and changed between two times or positions."));
    return;
  }
  const found = await api("GET", `/v1/diff?${new URLSearchParams({ first: from, second: to, limit: 100 })}`);
  const totals = found.totals || {};
  const pair = (e) => [chip(e.source), " ", h("a", { class: "arrow", href: linkHref(e.source, e.target) }, "—"), " ", chip(e.target)];
  const side = (x) => (x ? `written ${x.written}, taught ${num(x.taught)}` : "");
  const heading = [["Link"], ["Before", "hide-narrow"], ["After"]];
  view().append(
    h("p", { class: "meta" }, `From ${found.first} to ${found.second}.`),
    h("h2", {}, `Gained (${totals.appeared ?? found.appeared.length})`),
    table(heading, found.appeared.map((e) => [pair(e), side(e.before), side(e.after)]), "No link appeared."),
    h("h2", {}, `Lost (${totals.vanished ?? found.vanished.length})`),
    table(heading, found.vanished.map((e) => [pair(e), side(e.before), side(e.after)]), "No link vanished."),
    h("h2", {}, `Changed (${totals.changed ?? found.changed.length})`),
    table(heading, found.changed.map((e) => [pair(e), side(e.before), side(e.after)]), "No link changed weight."));
}

// ---- operators ----

async function operators() {
  show("Operators");
  const part = async (title, load) => {
    const section = h("section", {}, h("h2", {}, title));
    view().append(section);
    try {
      section.append(await load());
    } catch (error) {
      if (error instanceof Refused && error.status === 403) section.append(h("p", { class: "muted" }, `This key may not see it: ${error.message}`));
      else throw error;
    }
  };
  await part("Jobs", async () => {
    const { jobs } = await api("GET", "/v1/jobs");
    return table([["Job"], ["Status"], ["Progress"], ["Queued", "hide-narrow"], ["Why", "hide-narrow"]],
      jobs.map((j) => [j.id, j.status, j.progress ? `${j.progress.stage || ""} ${j.progress.done ?? ""}${j.progress.total ? ` of ${j.progress.total}` : ""}` : "",
        at(j.enqueued_at), j.error ? String(j.error).split("\n").slice(-2).join(" ") : ""]), "No job.");
  });
  await part("Dead letters", async () => {
    const found = await api("GET", "/v1/dead-letters");
    return table([["Position"], ["Reason"]], found.letters.map((l) => [l.position, l.reason]), "None: the fold applied every entry.");
  });
  await part("Keys of this tenant", async () => {
    const { keys } = await api("GET", "/v1/keys");
    return table([["Id"], ["Agent"], ["Permissions"], ["Pinned to", "hide-narrow"], ["Created", "hide-narrow"]],
      keys.map((k) => [k.id, k.agent, k.permissions.join(", ") + (k.operator ? " (operator)" : ""),
        [k.user && `user ${k.user}`, k.session && `session ${k.session}`, k.namespace && `namespace ${k.namespace}`].filter(Boolean).join(", "),
        at(k.created)]), "No key.");
  });
}

// ---- the router ----

const ROUTES = [
  [/^\/ui\/?$/, () => go("/ui/search", true)],
  [/^\/ui\/search$/, (m, p) => search(p)],
  [/^\/ui\/memories\/([^/]+)$/, (m) => memory(decodeURIComponent(m[1]))],
  [/^\/ui\/links\/([^/]+)\/([^/]+)$/, (m) => link(decodeURIComponent(m[1]), decodeURIComponent(m[2]))],
  [/^\/ui\/concepts(?:\/([^/]+))?$/, (m, p) => concept(m[1] ? decodeURIComponent(m[1]) : "", p)],
  [/^\/ui\/diff$/, (m, p) => diff(p)],
  [/^\/ui\/operators$/, () => operators()],
];

function go(address, replace) {
  if (replace) history.replaceState(null, "", address);
  else history.pushState(null, "", address);
  render();
}

async function render() {
  if (!key()) return login();
  const nav = document.querySelector("nav");
  nav.hidden = false;
  for (const a of nav.querySelectorAll("a")) {
    if (location.pathname.startsWith(a.getAttribute("href"))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const route = ROUTES.find(([pattern]) => pattern.test(location.pathname));
  if (!route) return show("Not found", h("p", {}, "No page here: ", h("a", { href: "/ui/search" }, "search")));
  view().removeAttribute("data-ready");
  view().replaceChildren(h("p", { class: "muted", role: "status" }, "Loading…"));
  try {
    await route[1](location.pathname.match(route[0]), new URLSearchParams(location.search));
    view().setAttribute("data-ready", Math.round(performance.now()));  // ms since navigation: bench/ui_pages.py
  } catch (error) {
    failure(error);
  }
}

document.addEventListener("click", (event) => {
  const anchor = event.target.closest("a");
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const href = anchor.getAttribute("href");
  if (href && href.startsWith("/ui") && !href.startsWith("/ui/assets")) {
    event.preventDefault();
    go(href);
  }
});
window.addEventListener("popstate", render);
document.getElementById("logout").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  go("/ui/search");
});
takeKeyFromFragment();
render();
