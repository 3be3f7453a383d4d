"""Plain-text rendering of API responses for the CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def written(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"id {r['id']}{note}  concepts: {', '.join(r['concepts']) or '(none)'}"


VIA_SHOWN = 3
"""Links printed per item; --json has them all."""


SNIPPET = 80
"""Characters of a memory's text on its line; --json has the whole text."""


def _snippet(text: str, width: int = SNIPPET) -> str:
    """`text` on one line (a commit message's blank lines and indents printed as they were
    broke every item over several lines), cut to `width` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _at(position: str) -> str:
    """Where a read was answered; 0-0 is a state before the log's first event (an `--as-of`
    earlier than it), which holds nothing."""
    return "at 0-0 (before the first event)" if position == "0-0" else f"at {position}"


def _weight(value: float) -> str:
    return f"{value:g}"


def recalled(r: dict[str, Any]) -> str:
    expanded = (
        ", ".join(f"{e['concept']} ({_weight(e['strength'])})" for e in r["expanded_concepts"])
        or "(none)"
    )
    query = ", ".join(c["concept"] for c in r["query_concepts"]) or "(time only)"
    lines = [f"{_at(r['position'])}  {r['depth']}  query: {query}  expanded: {expanded}"]
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
            f"  {item['source']:<11} {item['id']}  {item['score']:.3f}  {_snippet(item['text'])}{old}"
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
        if item.get("beside"):
            near = item["beside"]
            taught = f" (taught {near['taught']:+g})" if near.get("taught") else ""
            lines.append(f"{'':16}written {near['written']} {near['id']}{taught}")
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
    return f"time: {found} -> {moment(t['start'])} .. {moment(t['end'])} UTC"


def _chain(c: dict[str, Any]) -> str:
    hops = " ".join(f"-[{h['strength']:.2f}]-> {h['to']}" for h in c["hops"])
    return f"{c['path'][0]} {hops}  (weakest {c['total']:.2f})"


def chains(r: dict[str, Any]) -> str:
    lines = [f"{_at(r['position'])}  between: {', '.join(r['concepts'])}"]
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


def activity_list(r: dict[str, Any]) -> str:
    lines = [f"{_at(r['position'])}  {moment(r['start'])} .. {moment(r['end'])} UTC"]
    if not r["items"]:
        lines.append("  (no entries)")
    for m in r["items"]:
        tags = f"  #{' #'.join(m['tags'])}" if m.get("tags") else ""
        lines.append(f"  {moment(m['ts'])}  [{m.get('category')}] {_snippet(m['text'])}{tags}")
    return "\n".join(lines)


def activity_summary(r: dict[str, Any]) -> str:
    lines = [f"{_at(r['position'])}  per {r['period']}"]
    if not r["periods"]:
        lines.append("  (no entries)")
    for p in r["periods"]:
        categories = ", ".join(f"{c} {n}" for c, n in p["categories"].items())
        lines.append(f"  {p['start'][:10]}  {p['entries']} entries  ({categories})")
        lines.append(f"      top concepts: {', '.join(p['top_concepts'])}")
        for m in p["highlights"]:
            lines.append(f"      * {_snippet(m['text'], SNIPPET - 4)}")
    return "\n".join(lines)


def ingested(r: dict[str, Any]) -> str:
    line = (
        f"ingested {_counted(r['files'], 'file')} in {_counted(r['pieces'], 'piece')}:"
        f" {_counted(r['units'], 'unit')}"
    )
    again = r["already_stored"]  # sent before with the same key: counted, not added again
    if again and again == r["pieces"]:
        line += "; all already stored (sent before: nothing added)"
    elif again:
        line += f"; {again} of those pieces already stored (sent before: not added again)"
    return line


def _counted(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def fed_back(r: dict[str, Any]) -> str:
    note = " (already stored: same key)" if r["duplicate"] else ""
    return f"feedback at {r['position']}{note}  concepts: {', '.join(r['concepts'])}"


def _changed(edge: dict[str, Any]) -> str:
    if edge["changed_at"] is None:
        return f"from documents: assocmem audit link {edge['source_key']} {edge['target_key']}"
    return f"changed at {edge['changed_at']}"


def edges(r: dict[str, Any]) -> str:
    lines = [f"{_at(r['position'])}  around: {', '.join(r['concepts'])}  hops {r['hops']}"]
    if r.get("unknown_concepts"):  # a server from before it said so leaves it out
        lines.append(f"  unknown concepts: {', '.join(r['unknown_concepts'])}")
    if not r["edges"]:
        lines.append("  (no links)")
    for e in r["edges"]:
        lines.append(
            f"  {e['source']} -- {e['target']}  weight {_weight(e['weight'])}"
            f" (written {e['count']}, taught {_weight(e['learned'])}, {_changed(e)})"
        )
    return "\n".join(lines)


def state(r: dict[str, Any]) -> str:
    return (
        f"{_at(r['position'])}  hash {r['hash'][:16]}  memories {r['memories']}  concepts {r['concepts']}"
        f"  written links {r['written_links']}  taught links {r['taught_links']}"
    )


def moment(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M")


def link_audit(r: dict[str, Any]) -> str:
    share = f"; {r['written_share']:.0%} of it written" if r["weight"] else ""
    lines = [
        f"{r['source']} -- {r['target']}  weight {_weight(r['weight'])}"
        f" (written {r['count']}, taught {_weight(r['learned'])}{share})"
    ]
    if not r["changes"]:
        lines.append("  (no event ever linked them)")
    # Columns as wide as their longest entry (a consolidation's agent is 13 characters)
    agents = max([10, *(len(c["agent"]) for c in r["changes"])])
    types = max([18, *(len(c["type"]) + 1 for c in r["changes"])])
    for c in r["changes"]:
        moved = ", ".join(
            part
            for part in (
                f"written {c['written']:+}" if c["written"] else "",
                f"taught {c['taught']:+g}" if c["taught"] else "",
            )
            if part
        )
        lines.append(
            f"  {c['position']}  {moment(c['ts'])}  {c['agent']:<{agents}} {c['type']:<{types}}"
            f" {moved:<24}"
            f" -> weight {_weight(c['weight'])}"
        )
    return "\n".join(lines)


def memory_audit(r: dict[str, Any]) -> str:
    lines = [f"memory {r['id']}"]
    for e in r["events"]:
        shown = {k: v for k, v in e["detail"].items() if k not in ("links", "rule")}
        parts = [", ".join(f"{k} {v}" for k, v in shown.items())] if shown else []
        verb = "faded to" if e["type"] == "links.consolidated" else "taught"
        for link in e["detail"].get("links", ()):
            parts.append(f"link from {link['from']} {verb} {link['taught']:+g}")
        detail = "; ".join(parts)
        lines.append(
            f"  {e['position']}  {moment(e['ts'])}  {e['agent']:<10} {e['type']:<22} {detail[:160]}"
        )
    return "\n".join(lines)


def verification(r: dict[str, Any]) -> str:
    if r["matches"]:
        return f"{_at(r['position'])}  replay from zero matches the served state (hash {r['served_hash'][:16]})"
    return (
        f"{_at(r['position'])}  MISMATCH: replay {r['replayed_hash'][:16]}, served {r['served_hash'][:16]}"
        f"\n  first difference: {r['difference']}"
    )


def difference(r: dict[str, Any]) -> str:
    lines = [f"from {r['first']} to {r['second']}"]
    for kind in ("appeared", "vanished", "changed"):
        for c in r[kind]:
            before, after = c["before"], c["after"]
            lines.append(
                f"  {kind:<9} {c['source']} -- {c['target']}  written {before['written']:g} -> {after['written']:g},"
                f" taught {before['taught']:g} -> {after['taught']:g}"
            )
        unlisted = r["totals"][kind] - len(r[kind])
        if unlisted > 0:
            lines.append(f"  {kind:<9} ... and {unlisted:,} more (--limit)")
    if len(lines) == 1:
        lines.append("  (no link changed)")
    return "\n".join(lines)


def dead_letters(r: dict[str, Any]) -> str:
    if not r["letters"]:
        return "no dead letters"
    lines = []
    for d in r["letters"]:
        lines.append(f"{d['position']}  {d['reason']}")
        lines.append(
            f"    {(d['raw'] if d['raw'] is not None else '(no longer in the log)')[:160]}"
        )
    if r["total"] > len(r["letters"]):
        lines.append(f"... and {r['total'] - len(r['letters']):,} more (--limit)")
    return "\n".join(lines)


RESENT_SHOWN = 20
"""Dead letters of each outcome a resend lists; --json has them all."""


def resent(r: dict[str, Any]) -> str:
    if not r["resent"]:
        return "no dead letters"
    done = [d for d in r["resent"] if d["appended"]]
    left = [d for d in r["resent"] if not d["appended"]]
    lines = [f"{len(done):,} appended again, {len(left):,} left unreadable"]
    lines += [f"{d['position']}  appended again at {d['appended']}" for d in done[:RESENT_SHOWN]]
    if len(done) > RESENT_SHOWN:
        lines.append(f"... and {len(done) - RESENT_SHOWN:,} more appended again (--json)")
    lines += [f"{d['position']}  still unreadable: {d['reason']}" for d in left[:RESENT_SHOWN]]
    if len(left) > RESENT_SHOWN:
        lines.append(f"... and {len(left) - RESENT_SHOWN:,} more still unreadable (--json)")
    return "\n".join(lines)


def jobs(r: dict[str, Any]) -> str:
    if not r["jobs"]:
        return "no jobs queued, running or failed"
    lines = []
    for j in r["jobs"]:
        lines.append(
            f"{j['state']:<9} {j['id']:<28} {j['queue']:<22} {j['function']}{tuple(j['args'])}"
        )
        if j.get("retry_at"):
            at = datetime.fromisoformat(j["retry_at"]).astimezone(UTC).strftime("%H:%M:%S UTC")
            left = j["retries_left"] or 0
            more = f"{left} more {'retry' if left == 1 else 'retries'}" if left else "no retry"
            lines.append(f"          next try at {at}; {more} if that fails")
        if j["error"]:
            lines.append(f"          {j['error'][:150]}")
    return "\n".join(lines)


def consolidation(job: dict[str, Any]) -> str:
    report = job.get("result") or {}
    effect = report.get("effect", {})
    rule = report.get("rule", {})
    done = "would" if report.get("dry_run") else "did"
    more = ", ..." if effect.get("concepts_pruned", 0) > len(report.get("pruned", [])) else ""
    where = (
        f"appended links.consolidated at {report['appended_at']}"
        if report.get("appended_at")
        else "dry run: nothing appended"
    )
    return "\n".join(
        [
            f"consolidation of {report.get('tenant')} ({done}), decided at "
            f"{report.get('decided_at')}; {where}; {_took(report.get('seconds'))}",
            f"  concepts pruned   {effect.get('concepts_pruned')}"
            + (f"   ({', '.join(report['pruned'])}{more})" if report.get("pruned") else ""),
            f"  links decayed     {effect.get('links_decayed')}"
            f"   dropped {effect.get('links_dropped')}"
            f"   co-occurrences taken off {effect.get('written_removed')}",
            f"  taught decayed    {effect.get('taught_decayed')}"
            f"   dropped {effect.get('taught_dropped')}"
            f"   delta taken off {effect.get('taught_removed')}",
            f"  memories merged   {effect.get('memories_merged')}",
            f"  rule: recent window {rule.get('window_days')} d, written half-life "
            f"{_days(rule.get('written_half_life_days'))}, taught half-life "
            f"{_days(rule.get('taught_half_life_days'))}, min co-occurrence "
            f"{rule.get('min_cooccurrence')}, vocabulary cap {rule.get('vocabulary_cap')}",
        ]
    )


def archive_report(job: dict[str, Any]) -> str:
    r = job.get("result") or {}
    if not r.get("entries"):
        return (
            "nothing to archive: no entry is both older than the retention window and in a snapshot"
        )
    return (
        f"archived {r['entries']} entries up to {r['upto']} in {r['segments']} segments:"
        f" {r['raw_bytes']:,} bytes stored as {r['stored_bytes']:,}; {_took(r['seconds'])}"
    )


def _took(seconds: float | None) -> str:
    """A job's time, always to the millisecond: 0.010 s, not 0.01 s."""
    return "? s" if seconds is None else f"{seconds:.3f} s"


def archive_manifest(r: dict[str, Any]) -> str:
    if not r["segments"]:
        return "the archive is empty: every entry is in the log's stream"
    lines = [
        f"{r['entries']} entries in {len(r['segments'])} segments,"
        f" {r['raw_bytes']:,} bytes stored as {r['stored_bytes']:,}"
    ]
    lines += [
        f"  {s['first']} .. {s['last']}  {s['count']:>6} entries  {s['size']:>9,} bytes"
        for s in r["segments"]
    ]
    return "\n".join(lines)


def _days(value: float | None) -> str:
    return "never" if value is None else f"{value} d"


def erasure(job: dict[str, Any]) -> str:
    report = job.get("result") or {}
    where = (
        f"snapshot at {report['position']}"
        if report.get("position")
        else "nothing left to snapshot"
    )
    files = "AOF rewritten" if report.get("files_rewritten") else "AOF not rewritten"
    return (
        f"erased {report.get('kind')}: {report.get('events', 0)} events,"
        f" {report.get('memories', 0)} memories, {report.get('links', 0)} links,"
        f" learned weight {report.get('learned_weight', 0):g}; {where}; {files}"
    )
