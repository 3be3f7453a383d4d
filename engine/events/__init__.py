"""The event types, one module (one record) each; importing this package registers them."""

from assocmem.engine.events.activity_logged import ACTIVITY_LOGGED
from assocmem.engine.events.document_ingested import DOCUMENT_INGESTED
from assocmem.engine.events.feedback_given import FEEDBACK_GIVEN
from assocmem.engine.events.importance_set import IMPORTANCE_SET
from assocmem.engine.events.links_consolidated import LINKS_CONSOLIDATED
from assocmem.engine.events.memory_accessed import MEMORY_ACCESSED
from assocmem.engine.events.memory_written import MEMORY_WRITTEN
from assocmem.engine.events.subject_forgotten import SUBJECT_FORGOTTEN

__all__ = [
    "ACTIVITY_LOGGED",
    "DOCUMENT_INGESTED",
    "FEEDBACK_GIVEN",
    "IMPORTANCE_SET",
    "LINKS_CONSOLIDATED",
    "MEMORY_ACCESSED",
    "MEMORY_WRITTEN",
    "SUBJECT_FORGOTTEN",
]
