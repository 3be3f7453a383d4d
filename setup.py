"""The one C extension (engine/_note_concepts.c), built where a C compiler and Python's
headers are; where they are not, the install goes on without it and the engine runs the
same functions in Python (engine/note_concepts.py). Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "assocmem.engine._note_concepts",
            sources=["engine/_note_concepts.c"],
            optional=True,
        )
    ]
)
