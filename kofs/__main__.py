"""``python -m kofs`` = the ``kofs`` command."""

from kofs.cli import main

if __name__ == "__main__":
    main()
