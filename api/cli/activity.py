"""The activity log: log entries, list them, summarise them."""

from __future__ import annotations

import click

from assocmem.api.cli import render
from assocmem.api.cli.common import client_of, common, emit, remember, split


@click.command(
    "log",
    epilog="Example: assocmem log 'deployed v2.3 to staging' --category deploy --tags release,staging",
)
@click.argument("text")
@click.option("--category", default="general", show_default=True, help="Label to filter by.")
@click.option("--tags", help="Comma-separated tags.")
@click.option("--source", help="Who or what logged it.")
@click.option("--importance", type=int, default=3, show_default=True, help="1 to 5.")
@click.option("--ts", type=float, help="When it happened, unix seconds [default: now].")
@common
@click.pass_context
def log_activity(
    ctx: click.Context,
    text: str,
    category: str,
    tags: str | None,
    source: str | None,
    importance: int,
    ts: float | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Log an activity (episodic memory): recall it by day, range, category or keyword."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        response = client.log_activity(
            text,
            category=category,
            tags=split(tags) or [],
            source=source,
            importance=importance,
            ts=ts,
        )
        emit(ctx, response, render.written)


@click.command(
    epilog="Example: assocmem activities --when yesterday\n\n"
    "Example: assocmem activities --date 2026-11-28 --category deploy"
)
@click.option("--date", "day", help="One day, YYYY-MM-DD.")
@click.option("--when", help="A time expression: 'last week', '上周', 'since March'.")
@click.option("--category")
@click.option("--keyword", help="A concept or piece of text the entry must contain.")
@click.option("--source")
@click.option("--limit", type=int, help="Entries shown [default: 100].")
@click.option("--tz", help="IANA time zone [default: ASSOCMEM_TZ or UTC].")
@common
@click.pass_context
def activities(
    ctx: click.Context,
    day: str | None,
    when: str | None,
    category: str | None,
    keyword: str | None,
    source: str | None,
    limit: int | None,
    tz: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """List activity entries of a day or range (default: the last 7 days), newest first."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        response = client.activities(
            date=day,
            when=when,
            category=category,
            keyword=keyword,
            source=source,
            limit=limit,
            tz=tz,
        )
        emit(ctx, response, render.activity_list)


@click.command(epilog="Example: assocmem summary --period week --when 'last month'")
@click.option(
    "--period", type=click.Choice(["day", "week", "month"]), default="day", show_default=True
)
@click.option("--when", help="A time expression [default: the last 7 days].")
@click.option("--category")
@click.option("--tz", help="IANA time zone [default: ASSOCMEM_TZ or UTC].")
@common
@click.pass_context
def summary(
    ctx: click.Context,
    period: str,
    when: str | None,
    category: str | None,
    tz: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Summarise the activity log per day, week or month: counts, categories, top concepts."""
    remember(ctx, url, as_json)
    with client_of(ctx) as client:
        response = client.activity_summary(period, when=when, category=category, tz=tz)
        emit(ctx, response, render.activity_summary)
