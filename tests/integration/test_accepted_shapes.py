"""Nothing is acknowledged that the fold would reject: whatever the application accepts
folds without a dead letter (the append path checks with the rule the fold applies)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assocmem.engine.principal import Principal
from assocmem.workers.app.application import Application
from assocmem.workers.app.requests import ActivityEntry, Document, Note, Rating
from assocmem.workers.errors import ApplicationError
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from tests.stores import Clock

WORDS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40)
TEXTS = st.lists(
    st.one_of(WORDS, st.sampled_from(["timed out", "retries", "数据库超时", "C++", "v2.3", "ﷺ"])),
    min_size=1,
    max_size=12,
).map(" ".join)
TIMES = st.one_of(
    st.none(),
    st.floats(0, 253_402_300_799.0, allow_nan=False),
    st.sampled_from([float("nan"), float("inf"), 1e300, -1.0]),  # refused, never acknowledged
)
NOTES = st.builds(
    Note,
    text=TEXTS,
    concepts=st.one_of(st.none(), st.lists(WORDS, max_size=6)),
    importance=st.integers(1, 5),
    ts=TIMES,
    key=st.one_of(st.none(), st.text(min_size=1, max_size=20)),
)
ACTIVITIES = st.builds(
    ActivityEntry,
    text=TEXTS,
    category=WORDS.filter(str.strip),
    tags=st.lists(WORDS.filter(str.strip), max_size=4),
    importance=st.integers(1, 5),
    ts=TIMES,
)


@given(
    notes=st.lists(NOTES, min_size=1, max_size=8),
    entries=st.lists(ACTIVITIES, max_size=3),
    document=TEXTS,
    outcome=st.floats(-1, 1),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_accepted_event_is_folded_without_a_dead_letter(notes, entries, document, outcome):
    clock = Clock()
    app = Application(Runtime.in_memory(Settings(), clock), clock)
    who = Principal("default", "agent")
    accepted = []
    for note in notes:
        try:
            accepted += app.write(who, [note])
        except ApplicationError:
            continue  # refused: nothing was appended
    for entry in entries:
        try:
            accepted.append(app.log_activity(who, entry))
        except ApplicationError:
            pass
    try:
        app.ingest(who, Document("a document", document))
    except ApplicationError:
        pass
    if accepted:
        rating = Rating([str(accepted[0].position)], outcome, concepts=["answer"])
        app.give_feedback(who, rating)
    fold_and_publish(app.runtime, "default", force=True)
    assert app.runtime.log.dead_letters("default") == []
    with app.live("default").served() as state:
        assert all(str(w.position) in state.memories for w in accepted)
