"""Plain-text rendering of API responses for the CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def written(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"id {r['id']}{note}  concepts: {', '.join(r['concepts']) or '(none)'}"


VIA_SHOWN = 3
"""Links printed per item; --json has them all."""


def _weight(value: float) -> str:
    return f"{value:g}"


def recalled(r: dict[str, Any]) -> str:
    expanded = (
        ", ".join(f"{e['concept']} ({_weight(e['strength'])})" for e in r["expanded_concepts"])
        or "(none)"
    )
    query = ", ".join(c["concept"] for c in r["query_concepts"]) or "(time only)"
    lines = [f"at {r['position']}  {r['depth']}  query: {query}  expanded: {expanded}"]
    for m in r["matches"]:
        lines.append(f"  near miss: {m['query']} ~ {m['concept']} ({m['similarity']:g})")
    if r.get("time"):
        lines.append("  " + _time(r["time"]))
    for c in r["chains"]:
        lines.append("  chain: " + _chain(c))
    if not r["items"]:
        lines.append("  (no memories)")
    for item in r["items"]:
        old = f"  [superseded by {item['superseded_by']}]" if item.get("superseded_by") else ""
        lines.append(
            f"  {item['source']:<11} {item['id']}  {item['score']:.3f}  {item['text'][:80]}{old}"
        )
        for via in item["via"][:VIA_SHOWN]:
            lines.append(
                f"{'':16}via {via['from']} -> {via['concept']}  weight {_weight(via['weight'])}"
                f" (written {via['count']}, taught {_weight(via['learned'])}, ppmi {via['ppmi']:.2f})"
            )
        if len(item["via"]) > VIA_SHOWN:
            lines.append(f"{'':16}... {len(item['via']) - VIA_SHOWN} more links (--json shows all)")
        if "chain" in item:
            lines.append(f"{'':16}chain {_chain(item['chain'])}")
    if "prompt" in r:
        p = r["prompt"]
        lines.append(f"--- prompt text: {p['tokens']} of {p['budget']} tokens ---")
        lines.append(p["text"])
    return "\n".join(lines)


def _time(t: dict[str, Any]) -> str:
    found = (
        f"'{t['expression']}' (confidence {t['confidence']:g})" if "expression" in t else "range"
    )
    if not t["applied"]:
        return f"time: {found} not applied (below 0.5)"
    return f"time: {found} -> {_day(t['start'])} .. {_day(t['end'])} UTC"


def _chain(c: dict[str, Any]) -> str:
    hops = " ".join(f"-[{h['strength']:.2f}]-> {h['to']}" for h in c["hops"])
    return f"{c['path'][0]} {hops}  (weakest {c['total']:.2f})"


def chains(r: dict[str, Any]) -> str:
    lines = [f"at {r['position']}  between: {', '.join(r['concepts'])}"]
    if r["unknown_concepts"]:
        lines.append(f"  unknown concepts: {', '.join(r['unknown_concepts'])}")
    if not r["chains"]:
        lines.append("  (no chain within 4 hops)")
    for c in r["chains"]:
        lines.append("  " + _chain(c))
        for h in c["hops"]:
            lines.append(
                f"      {h['from']} -- {h['to']}: written {h['count']}, taught {_weight(h['learned'])},"
                f" evidence {', '.join(h['evidence']) or '(taught only)'}"
            )
    return "\n".join(lines)


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M")


def activity_list(r: dict[str, Any]) -> str:
    lines = [f"at {r['position']}  {_day(r['start'])} .. {_day(r['end'])} UTC"]
    if not r["items"]:
        lines.append("  (no entries)")
    for m in r["items"]:
        tags = f"  #{' #'.join(m['tags'])}" if m.get("tags") else ""
        lines.append(f"  {_day(m['ts'])}  [{m.get('category')}] {m['text'][:80]}{tags}")
    return "\n".join(lines)


def activity_summary(r: dict[str, Any]) -> str:
    lines = [f"at {r['position']}  per {r['period']}"]
    if not r["periods"]:
        lines.append("  (no entries)")
    for p in r["periods"]:
        categories = ", ".join(f"{c} {n}" for c, n in p["categories"].items())
        lines.append(f"  {p['start'][:10]}  {p['entries']} entries  ({categories})")
        lines.append(f"      top concepts: {', '.join(p['top_concepts'])}")
        for m in p["highlights"]:
            lines.append(f"      * {m['text'][:76]}")
    return "\n".join(lines)


def ingested(r: dict[str, Any]) -> str:
    again = f", {r['already_stored']} already stored" if r["already_stored"] else ""
    return f"ingested {r['files']} file(s) in {r['pieces']} piece(s): {r['units']} units{again}"


def fed_back(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"feedback at {r['position']}{note}  concepts: {', '.join(r['concepts'])}"


def edges(r: dict[str, Any]) -> str:
    lines = [f"at {r['position']}  around: {', '.join(r['concepts'])}  hops {r['hops']}"]
    if not r["edges"]:
        lines.append("  (no links)")
    for e in r["edges"]:
        lines.append(
            f"  {e['source']} -- {e['target']}  weight {_weight(e['weight'])}"
            f" (written {e['count']}, taught {_weight(e['learned'])}, changed at {e['changed_at']})"
        )
    return "\n".join(lines)


def state(r: dict[str, Any]) -> str:
    return (
        f"at {r['position']}  hash {r['hash'][:16]}  memories {r['memories']}  concepts {r['concepts']}"
        f"  written links {r['written_links']}  taught links {r['taught_links']}"
    )
