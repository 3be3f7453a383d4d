"""`python -m assocmem.api.cli`: the same command line as `assocmem`."""

from . import main

main()
