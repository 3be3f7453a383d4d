"""The C extensions (engine/state/_note_concepts.c, engine/recall/_dominance.c), built where
a C compiler and Python's headers are; where they are not, the install goes on without them
and the engine runs the same functions in Python (engine/state/note_concepts.py,
engine/recall/dominance.py). Everything else is in pyproject.toml."""

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildOptionalExt(build_ext):
    """build_ext that forgets an optional extension it could not build: setuptools warns
    and goes on, but an editable install then fails, copying the file that was not made."""

    def run(self) -> None:
        super().run()
        self.extensions = [
            e for e in self.extensions if os.path.exists(self.get_ext_fullpath(e.name))
        ]


setup(
    ext_modules=[
        Extension(
            "assocmem.engine.state._note_concepts",
            sources=["engine/state/_note_concepts.c"],
            optional=True,
        ),
        Extension(
            "assocmem.engine.recall._dominance",
            sources=["engine/recall/_dominance.c"],
            optional=True,
        ),
    ],
    cmdclass={"build_ext": BuildOptionalExt},
)
