"""Plain-text rendering of API responses for the CLI."""

from __future__ import annotations

from typing import Any


def written(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"id {r['id']}{note}  concepts: {', '.join(r['concepts']) or '(none)'}"


def _weight(value: float) -> str:
    return f"{value:g}"


def recalled(r: dict[str, Any]) -> str:
    expanded = (
        ", ".join(f"{c} ({_weight(w)})" for c, w in r["expanded_concepts"].items()) or "(none)"
    )
    lines = [
        f"at {r['position']}  query: {', '.join(r['query_concepts'])}  expanded: {expanded}",
    ]
    if not r["items"]:
        lines.append("  (no memories)")
    for item in r["items"]:
        lines.append(
            f"  {item['source']:<11} {item['id']}  {item['score']:.3f}  {item['text'][:80]}"
        )
        for via in item["via"]:
            lines.append(
                f"{'':16}via {via['from']} -> {via['concept']}  weight {_weight(via['weight'])}"
                f" (written {via['count']}, taught {_weight(via['learned'])})"
            )
    return "\n".join(lines)


def fed_back(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"feedback at {r['position']}{note}  concepts: {', '.join(r['concepts'])}"


def edges(r: dict[str, Any]) -> str:
    lines = [f"at {r['position']}  around: {', '.join(r['concepts'])}  depth {r['depth']}"]
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
