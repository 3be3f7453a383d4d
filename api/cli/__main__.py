"""`python -m assocmem.api.cli`: the same command line as `assocmem`."""

from assocmem.api.cli import main

if __name__ == "__main__":  # not when a spawned helper process imports this module
    main()
