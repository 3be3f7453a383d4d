"""The web page's load time at scale: each page of /ui in headless Chromium, from the start
of its navigation to its answer drawn (the time the page marks on `#view[data-ready]`),
against an `up` holding `--notes` commit messages written through HTTP.

    .venv/bin/python bench/ui_pages.py ../shared/data/corpus_en.jsonl --notes 50000

Needs Debian's chromium and chromium-driver (.ci/run installs them).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from recall import wait_for_snapshot, wait_until_served, write_all
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait
from skeleton import load_corpus

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def run_redis(home: str) -> str:
    info = read_run_file(Path(home) / "data")
    assert info is not None
    return info.redis_url


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1280,900")
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def load_ms(driver: webdriver.Chrome, url: str) -> float:
    driver.get(url)
    ready = WebDriverWait(driver, 120).until(
        lambda d: d.execute_script(
            "const v = document.getElementById('view');"
            " return v.getAttribute('data-ready') || (v.querySelector('.error') && 'error')"
        )
    )
    if ready == "error":
        raise RuntimeError(f"{url}: {driver.find_element('css selector', '.error').text}")
    return float(ready)


def api_ms(driver: webdriver.Chrome) -> float:
    """The longest API call of the page just loaded (the calls of a page run side by side)."""
    return driver.execute_script(
        "return Math.max(0, ...performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/v1/')).map(e => e.duration))"
    )


def pages(client: Client, written: list[dict], rows: list[dict]) -> dict[str, str]:
    middle, last = written[len(written) // 2], written[-1]
    question = rows[len(rows) // 3]["text"].splitlines()[0][:200]
    graph = client.graph(["fix"], hops=1)
    edge = max(graph["edges"], key=lambda e: e["weight"])
    return {
        "search (standard)": f"/ui/search?q={quote(question)}",
        "search (deep)": f"/ui/search?q={quote(question)}&depth=deep",
        "memory": f"/ui/memories/{middle['id']}",
        f"link {edge['source']}-{edge['target']}": f"/ui/links/{quote(edge['source'])}/{quote(edge['target'])}",
        "neighbourhood, 2 hops": "/ui/concepts/fix?hops=2",
        "two moments": f"/ui/diff?from={middle['position']}&to={last['position']}",
        "operators": "/ui/operators",
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--notes", type=int, default=50_000, help="newest commits written")
    parser.add_argument("--turns", type=int, default=7, help="loads of each page")
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.notes)
    with tempfile.TemporaryDirectory() as home:
        process, banner = spawn_up(Path(home) / "data", UNLIMITED)
        url = banner_url(banner)
        driver = browser()
        try:
            with Client(url, api_key=read_key_file(Path(home) / "data"), timeout=600) as client:
                written = write_all(client, rows, 500)
                wait_until_served(client, written[-1]["position"])
                addresses = pages(client, written, rows)
            wait_for_snapshot(run_redis(home), written[-1]["position"])
            time.sleep(5)  # the workers publish after the burst: the page is timed alone
            key = read_key_file(Path(home) / "data")
            load_ms(driver, f"{url}/ui/search#key={key}")  # logged in, script cached
            print(f"{args.notes:,} memories; ms from navigation to the answer drawn:")
            print(f"  {'page':<28} {'median':>7} {'min':>7} {'max':>7}  {'its API call':>12}")
            for name, address in addresses.items():
                times, calls = [], []
                for _ in range(args.turns):
                    times.append(load_ms(driver, f"{url}{address}"))
                    calls.append(api_ms(driver))
                print(
                    f"  {name:<28} {statistics.median(times):7.0f} {min(times):7.0f}"
                    f" {max(times):7.0f}  {statistics.median(calls):12.0f}",
                    flush=True,
                )
        finally:
            driver.quit()
            process.terminate()
            process.wait(60)


if __name__ == "__main__":
    main()
