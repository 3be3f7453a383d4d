"""Recall at scale through HTTP: latency per depth, hit@10 on self-retrieval, find_chain, RSS.

Self-retrieval: write N commit messages (author = agent, time = commit time),
then query with 2-3 content words of a random written commit; a hit is that
commit in the top 10. Two ways of picking the words are reported side by side:
`salient` (words of the commit's core + important TF-IDF tiers) and `any`
(any non-stop word of the commit, however generic). A third figure counts an
identical text (the git history has many "The fifth batch") as the same memory.

    .venv/bin/python bench/recall.py ../shared/data/corpus_en.jsonl --notes 50000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import redis
from skeleton import load_corpus  # bench/ is on sys.path when a script here runs

from assocmem.api.client import Client
from assocmem.api.run_file import read_run_file
from assocmem.api.spawn import banner_url, spawn_up
from assocmem.engine.extraction import _TOKEN, extract_concepts
from assocmem.workers.keys import latest_snapshot_key

DEPTHS = ("fast", "standard", "deep")


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
        if tuple(map(int, served.split("-"))) >= tuple(map(int, position.split("-"))):
            return time.perf_counter() - start
        time.sleep(0.5)


def wait_for_snapshot(redis_url: str, position: str) -> float:
    """Until the workers have folded everything: reads are measured in steady state, not while
    a fold job competes for the same two cores."""
    client = redis.Redis.from_url(redis_url)
    start = time.perf_counter()
    while (client.get(latest_snapshot_key("default")) or b"0-0").decode() != position:
        time.sleep(1.0)
    return time.perf_counter() - start


def queries(
    rows: list[dict], written: list[dict], count: int, mode: str, seed: int
) -> list[tuple[str, str]]:
    """(target id, query text) pairs; words picked per `mode` (salient or any)."""
    rnd = random.Random(seed)
    picked: list[tuple[str, str]] = []
    while len(picked) < count:
        n = rnd.randrange(len(rows))
        concepts = written[n]["concepts"]
        tiers = written[n].get("tiers")
        cut = {"core": 0, "salient": 1}.get(mode)
        allowed = set(concepts[: tiers[cut]] if tiers and cut is not None else concepts)
        words = []
        for word in dict.fromkeys(_TOKEN.findall(rows[n]["text"][:2000].lower())):
            found = extract_concepts(word)
            if found and found[0] in allowed:
                words.append(word)
        if len(words) < 2:
            continue
        chosen = rnd.sample(words, min(rnd.choice((2, 3)), len(words)))
        picked.append((written[n]["id"], " ".join(chosen)))
    return picked


def run_reads(
    client: Client, picked: list[tuple[str, str]], depth: str, now: float, texts: dict[str, str]
) -> dict:
    latencies, hits, hits_dup = [], 0, 0
    for target, text in picked:
        start = time.perf_counter()
        result = client.read(text, depth=depth, now=now, record_access=False, auto_time=False)
        latencies.append((time.perf_counter() - start) * 1000)
        ids = [item["id"] for item in result["items"]]
        hits += target in ids
        hits_dup += target in ids or texts[target] in {item["text"] for item in result["items"]}
    return {
        "p50": pct(latencies, 50),
        "p90": pct(latencies, 90),
        "p95": pct(latencies, 95),
        "hit": hits / len(picked),
        "hit_dup": hits_dup / len(picked),
    }


def chain_pairs(written: list[dict], count: int, seed: int) -> list[list[str]]:
    rnd = random.Random(seed)
    pairs = []
    while len(pairs) < count:
        a, b = rnd.choice(written)["concepts"][:3], rnd.choice(written)["concepts"][:3]
        if a and b:
            pair = [rnd.choice(a), rnd.choice(b)]
            if pair[0] != pair[1]:
                pairs.append(pair)
    return pairs


def noise_probe(rounds: int = 300) -> tuple[float, float]:
    """p50 and p95 (ms) of one fixed numpy job: how much this machine stalls, measured in the same run."""
    data = np.random.default_rng(0).random(200_000)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        np.sort(data)
        samples.append((time.perf_counter() - start) * 1000)
    return pct(samples, 50), pct(samples, 95)


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
        for mode in ("salient", "any"):
            picked = queries(rows, written, args.reads, mode, args.seed)
            run_reads(client, picked[:30], "deep", now, texts)  # warm-up
            for depth in DEPTHS:
                r = run_reads(client, picked, depth, now, texts)
                print(
                    f"read {mode:<7} {depth:<8} p50 {r['p50']:6.2f} ms  p90 {r['p90']:7.2f}  p95 {r['p95']:7.2f} ms"
                    f"  hit@10 {r['hit']:.3f}  (identical text counted: {r['hit_dup']:.3f})",
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
    p50, p95 = noise_probe()
    print(
        f"machine noise, fixed numpy sort: p50 {p50:.2f} ms  p95 {p95:.2f} ms  ({p95 / p50:.1f}x)"
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
        process, banner = spawn_up(Path(home) / "data")
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
