"""The event types, one module (one record) each; importing this package registers them."""

from .activity_logged import ACTIVITY_LOGGED
from .document_ingested import DOCUMENT_INGESTED
from .feedback_given import FEEDBACK_GIVEN
from .importance_set import IMPORTANCE_SET
from .links_consolidated import LINKS_CONSOLIDATED
from .memory_accessed import MEMORY_ACCESSED
from .memory_written import MEMORY_WRITTEN
from .subject_forgotten import SUBJECT_FORGOTTEN

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
