"""Recall at scale through HTTP: latency per depth, hit@10 on self-retrieval, find_chain, RSS.

Self-retrieval: write N commit messages (author = agent, time = commit time),
then query with 2-3 content words of a random written commit; a hit is that
commit in the top 10. Three ways of picking the words are reported side by side
(see `queries`): `discriminative` (the known-item query model of Azzopardi et al.,
SIGIR 2007), `salient` (the commit's core + important TF-IDF tiers) and `any`
(any concept of the commit, however generic), each next to the hit@10 of a
matcher that knows only which memories carry all the query's concepts (random
among ties). Another figure counts an identical text (the git history has many
"The fifth batch") as the same memory.

    .venv/bin/python bench/recall.py ../shared/data/corpus_en.jsonl --notes 50000
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.engine.position import Position
from assocmem.engine.text.extraction import _TOKEN, extract_concepts
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import load_settings

DEPTHS = ("fast", "standard", "deep")
MODES = ("discriminative", "salient", "any")


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


def write_all(client: Client, rows: list[dict], batch: int) -> list[dict]:
    written: list[dict] = []
    start = time.perf_counter()
    for n in range(0, len(rows), batch):
        chunk = rows[n : n + batch]
        items = [{"text": r["text"][:2000], "ts": float(r["ts"]), "key": r["id"]} for r in chunk]
        written += client.write_many(items)
        if (n // batch) % 20 == 0:
            rate = len(written) / (time.perf_counter() - start)
            print(f"  written {len(written):,} ({rate:,.0f}/s)", flush=True)
    rate = len(rows) / (time.perf_counter() - start)
    print(f"appends through HTTP, batches of {batch}: {rate:,.0f}/s")
    return written


def wait_until_served(client: Client, position: str) -> float:
    start = time.perf_counter()
    while True:
        health = client.health()
        served = health.get("served_position") or "0-0"
        if Position.parse(served) >= Position.parse(position):
            return time.perf_counter() - start
        time.sleep(0.5)


def wait_for_snapshot(redis_url: str, position: str) -> float:
    """Until the workers have folded everything: reads are measured in steady state, not while
    a fold job competes for the same two cores."""
    runtime = Runtime.connect(load_settings({"REDIS_URL": redis_url}))
    start = time.perf_counter()
    while str(runtime.snapshots.latest_position("default")) != position:
        time.sleep(1.0)
    runtime.close()
    return time.perf_counter() - start


def keys(written: dict) -> list[str]:
    """A write's canonical concepts (its `concepts` are the labels people read)."""
    return written.get("concept_keys", written["concepts"])


def queries(
    rows: list[dict], written: list[dict], count: int, mode: str, seed: int
) -> list[tuple[str, str]]:
    """(target id, query text) pairs of 2-3 distinct concepts of a random commit, picked per `mode`.

    - discriminative: sampled with probability proportional to 1 / document frequency, the
      known-item query model of Azzopardi, de Rijke & Balog (SIGIR 2007): words that tell
      this commit apart, as somebody looking for it would use;
    - salient: uniformly from the commit's core and important TF-IDF tiers;
    - any: uniformly from every concept of the commit, however generic.
    Each concept is written as the first word of the commit that carries it.
    """
    rnd = random.Random(seed)
    frequency = Counter(c for w in written for c in keys(w))
    picked: list[tuple[str, str]] = []
    while len(picked) < count:
        n = rnd.randrange(len(rows))
        concepts, tiers = keys(written[n]), written[n].get("tiers")
        allowed = set(concepts[: tiers[1]] if tiers and mode == "salient" else concepts)
        words: dict[str, str] = {}
        for word in _TOKEN.findall(rows[n]["text"][:2000].lower()):
            found = extract_concepts(word)
            if found and found[0] in allowed:
                words.setdefault(found[0], word)
        if len(words) < 2:
            continue
        size = min(rnd.choice((2, 3)), len(words))
        pool = list(words)
        if mode == "discriminative":
            chosen = []
            for _ in range(size):
                pick = rnd.choices(pool, weights=[1 / frequency[c] for c in pool])[0]
                chosen.append(pick)
                pool.remove(pick)
        else:
            chosen = rnd.sample(pool, size)
        picked.append((written[n]["id"], " ".join(words[c] for c in chosen)))
    return picked


def tie_limited(written: list[dict], picked: list[tuple[str, str]]) -> float:
    """Expected hit@10 of a matcher that knows only which memories carry every query concept.

    m memories carrying all of a query's concepts tie for it: picked at random among them,
    the commit is in the top 10 with chance min(1, 10 / m). How ambiguous the queries are;
    a ranking beats it only by what else it knows (tiers, length, time).
    """
    postings: dict[str, set[int]] = {}
    for n, w in enumerate(written):
        for c in keys(w):
            postings.setdefault(c, set()).add(n)
    chances = []
    for _, text in picked:
        sets = sorted((postings.get(c, set()) for c in extract_concepts(text)), key=len)
        carrying = set.intersection(*sets) if sets else set()
        chances.append(min(1.0, 10 / max(1, len(carrying))))
    return sum(chances) / len(chances)


def run_reads(
    client: Client, picked: list[tuple[str, str]], depth: str, now: float, texts: dict[str, str]
) -> dict:
    """Each read is followed by a control: the cheapest request the API answers (health: a
    Redis PING and XLEN), timed alike. Its p95/p50 is the floor this machine puts under any
    request's p95/p50 at that moment."""
    latencies: list[float] = []
    control: list[float] = []
    hits, hits_dup = 0, 0
    for target, text in picked:
        start = time.perf_counter()
        result = client.read(text, depth=depth, now=now, record_access=False, auto_time=False)
        latencies.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        client.health()
        control.append((time.perf_counter() - start) * 1000)
        ids = [item["id"] for item in result["items"]]
        hits += target in ids
        hits_dup += target in ids or texts[target] in {item["text"] for item in result["items"]}
    return {
        "p50": pct(latencies, 50),
        "p90": pct(latencies, 90),
        "p95": pct(latencies, 95),
        "hit": hits / len(picked),
        "hit_dup": hits_dup / len(picked),
        "control_p50": pct(control, 50),
        "control_p95": pct(control, 95),
    }


def chain_pairs(written: list[dict], count: int, seed: int) -> list[list[str]]:
    rnd = random.Random(seed)
    pairs = []
    while len(pairs) < count:
        a, b = keys(rnd.choice(written))[:3], keys(rnd.choice(written))[:3]
        if a and b:
            pair = [rnd.choice(a), rnd.choice(b)]
            if pair[0] != pair[1]:
                pairs.append(pair)
    return pairs


def stall_meter(seconds: float = 10.0) -> tuple[float, float]:
    """Share of wall time a busy Python loop did not run (gaps over 5 ms), and the longest gap.

    On a shared VM the process is descheduled for tens to hundreds of milliseconds at a
    time; any request that meets such a gap takes that long, whatever the code does.
    """
    lost, longest = 0.0, 0.0
    last = start = time.perf_counter()
    while last - start < seconds:
        now = time.perf_counter()
        if now - last > 0.005:
            lost += now - last
            longest = max(longest, now - last)
        last = now
    return lost / seconds, longest * 1000


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench(url: str, api_pid: int | None, redis_url: str | None, args: argparse.Namespace) -> None:
    rows = load_corpus(args.corpus, args.notes)
    texts = {}
    with Client(url, timeout=600) as client:
        written = write_all(client, rows, args.batch)
        for w, r in zip(written, rows, strict=True):
            texts[w["id"]] = r["text"][:2000]
        waited = wait_until_served(client, written[-1]["position"])
        print(f"API caught up with the log {waited:.1f} s after the last write")
        if redis_url:
            waited = wait_for_snapshot(redis_url, written[-1]["position"])
            print(f"workers published the last snapshot {waited:.1f} s after that")
        now = max(float(r["ts"]) for r in rows)
        for mode in MODES:
            picked = queries(rows, written, args.reads, mode, args.seed)
            print(
                f"{mode} queries, e.g. {picked[0][1]!r}: hit@10 of a carries-all-concepts"
                f" matcher (random among ties) {tie_limited(written, picked):.3f}",
                flush=True,
            )
            run_reads(client, picked[:30], "deep", now, texts)  # warm-up
            for depth in DEPTHS:
                r = run_reads(client, picked, depth, now, texts)
                print(
                    f"read {mode:<7} {depth:<8} p50 {r['p50']:6.2f} ms  p90 {r['p90']:7.2f}  p95 {r['p95']:7.2f} ms"
                    f"  hit@10 {r['hit']:.3f}  (identical text counted: {r['hit_dup']:.3f})\n"
                    f"     p95/p50 {r['p95'] / r['p50']:5.1f}; control, GET /v1/health after each read:"
                    f" p50 {r['control_p50']:.2f} ms, p95 {r['control_p95']:.2f} ms,"
                    f" p95/p50 {r['control_p95'] / r['control_p50']:.1f}",
                    flush=True,
                )
        latencies, found = [], 0
        for pair in chain_pairs(written, args.reads, args.seed):
            start = time.perf_counter()
            result = client.find_chain(pair)
            latencies.append((time.perf_counter() - start) * 1000)
            found += bool(result["chains"])
        print(
            f"find_chain p50 {pct(latencies, 50):.2f} ms  p95 {pct(latencies, 95):.2f} ms"
            f"  (a chain found for {found / len(latencies):.0%} of random concept pairs)"
        )
        if api_pid:
            print(f"API replica RSS: {rss_mb(api_pid):.0f} MB")
    lost, longest = stall_meter()
    print(
        f"machine stalls, busy loop for 10 s: {lost:.0%} of wall time lost in gaps over 5 ms,"
        f" longest {longest:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON object per line)")
    parser.add_argument("--notes", type=int, default=50_000)
    parser.add_argument("--reads", type=int, default=300, help="queries per depth and mode")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assocmem-bench-") as home:
        process, banner = spawn_up(Path(home) / "data", UNLIMITED)
        os.environ["ASSOCMEM_API_KEY"] = (
            read_key_file(Path(home) / "data") or ""
        )  # the clients send it
        try:
            info = read_run_file(Path(home) / "data")
            bench(
                banner_url(banner),
                info.api_pid if info else None,
                info.redis_url if info else None,
                args,
            )
        finally:
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
